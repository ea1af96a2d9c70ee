"""One mapping of upstream HTTP failures to error codes, the same for Google Places, Supermemory and
Notion (each upstream mocked by httpx.MockTransport with error bodies shaped like its real ones)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.support import no_wait
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.upstream.failures import (
    UpstreamService,
    code_for_status,
    redact,
    status_failure,
    transport_failure,
    unreadable_answer,
)
from toolsets.infra.upstream.google_places import PlacesClient
from toolsets.infra.upstream.notion import sync_notion
from toolsets.infra.upstream.supermemory import SupermemoryMemories

KEY = "secret-key-0123456789"
SERVICE = UpstreamService(
    name="Example API",
    key_variable="EXAMPLE_API_KEY",
    fix_key="Set EXAMPLE_API_KEY to a key from example.test/keys.",
    retry_later="try again in a minute",
    change_request="Shorten the query.",
)

EXPECTED = {
    400: ErrorCode.UPSTREAM_REJECTED,
    401: ErrorCode.UPSTREAM_AUTH,
    403: ErrorCode.UPSTREAM_AUTH,
    404: ErrorCode.UPSTREAM_REJECTED,
    408: ErrorCode.UPSTREAM_UNAVAILABLE,
    409: ErrorCode.UPSTREAM_REJECTED,
    422: ErrorCode.UPSTREAM_REJECTED,
    429: ErrorCode.UPSTREAM_RATE_LIMITED,
    500: ErrorCode.UPSTREAM_UNAVAILABLE,
    502: ErrorCode.UPSTREAM_UNAVAILABLE,
    503: ErrorCode.UPSTREAM_UNAVAILABLE,
    504: ErrorCode.UPSTREAM_UNAVAILABLE,
}


@pytest.mark.parametrize(("status", "code"), EXPECTED.items())
def test_status_codes_map_to_one_vocabulary(status: int, code: ErrorCode) -> None:
    assert code_for_status(status) is code
    error = status_failure(SERVICE, status, action="look things up", detail="the reason")
    assert error.code is code and error.retryable is code.retryable
    assert error.message.startswith("Example API ")


def test_each_code_is_worded_with_the_service_s_own_advice() -> None:
    auth = status_failure(SERVICE, 401, action="look things up")
    assert "EXAMPLE_API_KEY" in auth.message and "example.test/keys" in auth.message
    assert not auth.retryable
    limited = status_failure(SERVICE, 429, action="look things up")
    assert "rate limited" in limited.message and "may be retried" in limited.message and limited.retryable
    down = status_failure(SERVICE, 503, action="look things up")
    assert "unavailable (HTTP 503)" in down.message and "try again in a minute" in down.message
    rejected = status_failure(SERVICE, 422, action="look things up", detail="q: too long")
    assert "(HTTP 422: q: too long)" in rejected.message and "Shorten the query." in rejected.message
    labelled = status_failure(SERVICE, 400, action="x", label="400 INVALID_ARGUMENT", code=ErrorCode.UPSTREAM_AUTH)
    assert labelled.code is ErrorCode.UPSTREAM_AUTH and "HTTP 400 INVALID_ARGUMENT" in labelled.message


def test_no_answer_is_unavailable_and_retryable() -> None:
    request = httpx.Request("GET", "https://api.example.test/")
    timeout = transport_failure(SERVICE, httpx.ReadTimeout("slow", request=request), action="x", hint="Check first.")
    refused = transport_failure(SERVICE, httpx.ConnectError("refused", request=request), action="x")
    assert timeout.code is refused.code is ErrorCode.UPSTREAM_UNAVAILABLE and timeout.retryable
    assert "did not answer in time" in timeout.message and timeout.message.endswith(" Check first.")
    assert "could not be reached" in refused.message
    unreadable = unreadable_answer(SERVICE, action="x")
    assert unreadable.code is ErrorCode.UPSTREAM_ERROR and unreadable.retryable


def test_redact_hides_the_key() -> None:
    assert redact(f"bad key {KEY}!", KEY) == "bad key [redacted]!" and redact("text", None) == "text"


# -- the three clients agree --------------------------------------------------------------------


def google_body(status: int) -> dict[str, Any]:
    return {"error": {"code": status, "message": "Something went wrong.", "status": "FAILED_PRECONDITION"}}


def supermemory_body(status: int) -> dict[str, Any]:
    return {"error": "Something went wrong", "details": f"status {status}"}


def notion_body(status: int) -> dict[str, Any]:
    return {"object": "error", "status": status, "code": "some_error", "message": "Something went wrong."}


async def places_call(transport: httpx.MockTransport, tmp_path: Path) -> None:
    await PlacesClient(SecretStr(KEY), transport=transport, sleep=no_wait).search_text("cafe")


async def supermemory_call(transport: httpx.MockTransport, tmp_path: Path) -> None:
    await SupermemoryMemories(SecretStr(KEY), transport=transport, sleep=no_wait).save("alice", "tea", [])


async def notion_call(transport: httpx.MockTransport, tmp_path: Path) -> None:
    await sync_notion(tmp_path / "docs", token=SecretStr(KEY), transport=transport, sleep=no_wait)


CLIENTS: list[tuple[Callable[[httpx.MockTransport, Path], Awaitable[None]], Callable[[int], dict[str, Any]]]] = [
    (places_call, google_body),
    (supermemory_call, supermemory_body),
    (notion_call, notion_body),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "body"), CLIENTS, ids=["places", "supermemory", "notion"])
@pytest.mark.parametrize("status", [400, 401, 403, 422, 429, 500, 503])
async def test_every_client_maps_a_status_the_same_way(
    call: Callable[[httpx.MockTransport, Path], Awaitable[None]],
    body: Callable[[int], dict[str, Any]],
    status: int,
    tmp_path: Path,
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body(status)))
    with pytest.raises(ToolError) as raised:
        await call(transport, tmp_path)
    assert raised.value.code is EXPECTED[status], raised.value.message
    assert raised.value.retryable is EXPECTED[status].retryable
    assert KEY not in raised.value.message


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "body"), CLIENTS, ids=["places", "supermemory", "notion"])
@pytest.mark.parametrize("failure", [httpx.ReadTimeout("slow"), httpx.ConnectError("refused")])
async def test_every_client_maps_no_answer_the_same_way(
    call: Callable[[httpx.MockTransport, Path], Awaitable[None]],
    body: Callable[[int], dict[str, Any]],
    failure: Exception,
    tmp_path: Path,
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise failure

    with pytest.raises(ToolError) as raised:
        await call(httpx.MockTransport(fail), tmp_path)
    assert raised.value.code is ErrorCode.UPSTREAM_UNAVAILABLE and raised.value.retryable
