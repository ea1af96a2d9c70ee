"""`GET /metrics` on a real `truloop-mcp --transport http` (docs/metrics.md): who may read it, and that what it
shows follows the calls, with the speed paths on (`fast`) and off (`plain`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Iterator

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support import (
    MODES,
    SECRET,
    child_env,
    device_online,
    eventually,
    mcp_client,
    paths_env,
    replica_env,
    spawn_http_server,
    token,
)

pytestmark = pytest.mark.timeout(120)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(scope="module", params=[True, False], ids=["fast", "plain"])
def secured(request: pytest.FixtureRequest) -> Iterator[str]:
    env = paths_env(request.param, TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--deferred-timeout", "20", env=env) as base:
        yield base


OPERATOR = "operator"  # scrape()'s default: an operator's token, minted per scrape (tokens live 5 minutes)


def scrape(base: str, bearer: str | None = OPERATOR) -> Samples:
    if bearer == OPERATOR:
        bearer = token(sub="ops", role="operator")
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    response = httpx.get(f"{base}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_only_an_operator_token_reads_the_metrics(secured: str) -> None:
    url = f"{secured}/metrics"
    nobody = httpx.get(url, timeout=10)
    assert nobody.status_code == 401
    assert nobody.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{secured}/.well-known/oauth-protected-resource/mcp"'
    )
    expired = httpx.get(url, headers={"Authorization": f"Bearer {token(exp=int(time.time()) - 3600)}"}, timeout=10)
    assert expired.status_code == 401 and 'error_description="token expired"' in expired.headers["www-authenticate"]
    for role in ("guest", "member", None):  # a token without a role is a guest's
        refused = httpx.get(url, headers={"Authorization": f"Bearer {token(role=role)}"}, timeout=10)
        assert refused.status_code == 403, (role, refused.text)
        assert refused.json()["error"] == "forbidden" and "truloop_" not in refused.text
    samples = scrape(secured)
    assert value(samples, "truloop_store_up") == 1
    assert any(name == "process_cpu_seconds_total" for name, _ in samples)


@pytest.mark.anyio
@MODES
async def test_a_call_is_counted_and_timed(secured: str, mode: str) -> None:
    before = scrape(secured)
    async with mcp_client(secured, token(role="member"), mode=mode) as client:
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        refused = await client.call_tool("no_such_tool", {})
        during = scrape(secured)
    after = scrape(secured)
    assert not result.is_error and refused.is_error

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("truloop_tool_calls_total", tool="get_day_of_week", outcome="ok") == 1
    assert grew("truloop_tool_calls_total", tool="(unknown)", outcome="unknown_tool") == 1
    assert grew("truloop_tool_call_duration_seconds_count", tool="get_day_of_week") == 1
    assert grew("truloop_tool_call_duration_seconds_bucket", tool="get_day_of_week", le="+Inf") == 1
    assert value(after, "truloop_tool_call_duration_seconds_sum", tool="get_day_of_week") > 0
    sessions = value(during, "truloop_sessions_open", endpoint="/mcp")
    assert sessions >= (1 if mode == "legacy" else 0)  # a handshake-era client holds a session while it is open
    assert ("truloop_sessions_open", (("endpoint", "/sse"),)) in after


@pytest.mark.anyio
async def test_a_call_waiting_for_the_device_is_a_deferred_call_waiting(secured: str) -> None:
    release = anyio.Event()

    async def held(params: dict[str, object]) -> dict[str, object]:
        await release.wait()
        return {"result": {"status": "granted"}}

    async def waiting() -> float:  # scraped from a thread: the device answers on this loop
        return value(await anyio.to_thread.run_sync(scrape, secured), "truloop_deferred_calls_waiting")

    assert await waiting() == 0
    with anyio.fail_after(30):
        async with (
            device_online(secured, "alice", {"permissions.getStatus": held}),
            mcp_client(secured, token(role="member")) as client,
            anyio.create_task_group() as tg,
        ):
            answered: list[object] = []
            done = anyio.Event()

            async def ask() -> None:
                arguments = {"notification_message": "Checking", "permission": "calendar.read"}
                answered.append(await client.call_tool("get_permission_status", arguments))
                done.set()

            tg.start_soon(ask)
            await eventually(lambda: equals(waiting(), 1))
            release.set()
            await done.wait()
    assert await waiting() == 0
    (result,) = answered
    assert not getattr(result, "is_error", True)
    assert value(scrape(secured), "truloop_tool_calls_total", tool="get_permission_status", outcome="ok") >= 1


async def equals(found: Awaitable[float], expected: float) -> bool:
    return await found == expected


def test_redis_health_is_a_gauge_when_redis_is_configured(redis_url: str, redis_prefix: str) -> None:
    with spawn_http_server(env=replica_env(redis_url, redis_prefix)) as base:
        samples = scrape(base)
    assert value(samples, "truloop_redis_up") == 1 and value(samples, "truloop_store_up") == 1


def test_without_tokens_loopback_callers_read_the_metrics() -> None:
    with spawn_http_server("--user", "solo", env=child_env()) as base:
        samples = scrape(base, bearer=None)
    assert value(samples, "truloop_store_up") == 1
    assert ("truloop_redis_up", ()) not in samples  # no Redis configured
