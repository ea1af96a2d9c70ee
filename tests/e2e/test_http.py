"""A real `truloop-mcp --transport http` subprocess on 127.0.0.1: streamable HTTP, SSE, auth; the secured server
with the speed paths (`fast`) and without them (`plain`, `TRULOOP_FAST_PATHS=0`)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.support import MODES, SECRET, error_of, paths_env, spawn_http_server, token


@pytest.fixture(scope="module", params=[True, False], ids=["fast", "plain"])
def secured(request: pytest.FixtureRequest) -> Iterator[str]:
    with spawn_http_server(env=paths_env(request.param, TRULOOP_JWT_SECRET=SECRET)) as base:
        yield base


@pytest.fixture(scope="module")
def open_loopback() -> Iterator[str]:
    with spawn_http_server("--user", "solo") as base:
        yield base


def http_client(base: str, bearer: str | None, path: str = "/mcp", **kwargs: object) -> Client:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    transport = streamable_http_client(f"{base}{path}", http_client=httpx2.AsyncClient(headers=headers, timeout=30))
    return Client(transport, **kwargs)  # type: ignore[arg-type]


@pytest.mark.anyio
@MODES
async def test_streamable_http_member(secured: str, mode: str) -> None:
    async with http_client(secured, token(role="member"), mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert {"get_day_of_week", "get_current_datetime"} <= names
    assert result.structured_content == {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}


@pytest.mark.anyio
@MODES
async def test_guest_token_never_sees_or_calls_member_tools(secured: str, mode: str) -> None:
    async with http_client(secured, token(role="guest"), mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert "get_day_of_week" not in names
    assert refused.is_error and error_of(refused)["code"] == "unknown_tool"  # type: ignore[index]


@pytest.mark.anyio
async def test_token_without_role_is_least_privilege(secured: str) -> None:
    async with http_client(secured, token(role=None)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" not in names


@pytest.mark.anyio
async def test_notification_safe_surface(secured: str) -> None:
    async with http_client(secured, token(role="member"), path="/notification-safe/mcp") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" in names


@pytest.mark.anyio
async def test_callers_zone_comes_from_the_token(secured: str) -> None:
    async with http_client(secured, token(role="member", zoneinfo="Asia/Kolkata")) as client:
        result = await client.call_tool("get_current_datetime", {})
    assert result.structured_content is not None and result.structured_content["utc_offset"] == "+05:30"


@pytest.mark.anyio
@MODES
async def test_legacy_sse_transport(secured: str, mode: str) -> None:
    headers = {"Authorization": f"Bearer {token(role='member')}"}
    async with Client(sse_client(f"{secured}/sse", headers=headers), mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert result.structured_content is not None and result.structured_content["day_of_week"] == "Tuesday"


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    "bearer",
    [
        None,
        "not-a-jwt",
        token(secret="another-secret-that-is-long-enough-32b"),
        token(exp=int(time.time()) - 3600),
        token(role="admin"),
        token(sub=""),
    ],
    ids=["none", "garbage", "wrong-secret", "expired", "unknown-role", "empty-sub"],
)
def test_bad_credentials_get_401_and_nothing_runs(secured: str, bearer: str | None) -> None:
    headers = dict(ACCEPT)
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    for path, method in (("/mcp", "POST"), ("/notification-safe/mcp", "POST"), ("/sse", "GET")):
        response = httpx.request(method, f"{secured}{path}", json=INIT if method == "POST" else None, headers=headers)
        assert response.status_code == 401, (path, response.text)
        assert "Traceback" not in response.text
        assert "www-authenticate" in response.headers


def test_healthz_is_public(secured: str) -> None:
    response = httpx.get(f"{secured}/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_dns_rebinding_protection_on_loopback(secured: str) -> None:
    headers = {**ACCEPT, "Authorization": f"Bearer {token()}", "Host": "evil.example.com"}
    assert httpx.post(f"{secured}/mcp", json=INIT, headers=headers).status_code == 421
    headers = {**ACCEPT, "Authorization": f"Bearer {token()}", "Origin": "http://evil.example.com"}
    assert httpx.post(f"{secured}/mcp", json=INIT, headers=headers).status_code == 403


@pytest.mark.anyio
async def test_without_a_secret_loopback_serves_the_default_user(open_loopback: str) -> None:
    async with http_client(open_loopback, None) as client:
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert result.structured_content is not None and result.structured_content["day_of_week"] == "Tuesday"


def test_allowed_hosts_are_configurable() -> None:
    with spawn_http_server("--allowed-host", "mcp.example.test:*") as base:
        good = httpx.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, "Host": "mcp.example.test:443"})
        bad = httpx.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, "Host": "evil.example:80"})
    assert good.status_code == 200 and bad.status_code == 421
