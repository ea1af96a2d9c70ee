"""The load balancer of compose.yaml (deploy/haproxy.cfg, HAProxy from Debian's packages) in front of two real
replicas sharing one Redis and one PostgreSQL schema, everything on 127.0.0.1.

What the balancer must hold: a handshake-era session (which lives in the one process that answered its
`initialize`) stays on that replica for every request, its inline elicitation answer included, while the
rest of the traffic is spread over both; a deferred call is answered by a device whose stream and answers
pass through the balancer to whichever replica; 2026-07-28 requests (no sessions) go anywhere, an
elicitation round sealed by one replica accepted by the other.

Which replica answered is read from the `X-Truloop-Replica` header the balancer adds to every response.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import mcp.types as types
import pytest

from bridge.device import DeviceSimulator
from tests.conftest import ROOT
from tests.support import SECRET, answering, child_env, http_server_process, token

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = ROOT / "deploy" / "haproxy.cfg"  # the very file compose.yaml mounts into its balancer
REPLICA_HEADER = "x-truloop-replica"
CALENDAR = {"notification_message": "Reading your calendar", "start_date": "2026-03-09T00:00:00+09:00",
            "end_date": "2026-03-15T23:59:59+09:00"}  # fmt: skip
PERMISSION = {"notification_message": "Checking", "permission": "location"}


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    assert found, "haproxy is not installed (.ci/run installs Debian's package `haproxy`)"
    return found


@contextlib.contextmanager
def balancer(replicas: Sequence[str], log: Path, timeout: float = 15.0) -> Iterator[str]:
    """HAProxy with deploy/haproxy.cfg in front of `replicas` (two base URLs); yields its base URL once it
    answers /healthz. It listens on a socket bound here to a free loopback port and handed over as `fd@N`
    (no port guessed, so no race for one)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    a, b = (urlsplit(url).netloc for url in replicas)
    env = {
        "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
        "TRULOOP_LB_BIND": f"fd@{listener.fileno()}",
        "TRULOOP_REPLICA_A": a,
        "TRULOOP_REPLICA_B": b,
    }
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [haproxy_binary(), "-db", "-f", str(CONFIG)],
            env=env,
            pass_fds=(listener.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
        )
    listener.close()  # HAProxy holds its own copy
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"haproxy exited ({proc.returncode}): {log.read_text(errors='replace')}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the balancer did not answer /healthz within {timeout:g} s: {log.read_text()}")
            time.sleep(0.05)  # a process offers no event to await
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Served:
    """One response through the balancer: who answered, what was asked, the session ids either way."""

    replica: str
    method: str  # the HTTP method, then the JSON-RPC method of a POST to /mcp when there is one
    path: str
    status: int
    sent_session: str | None
    got_session: str | None


@dataclass
class Traffic:
    """Every response that passed through the balancer to one client, in order."""

    seen: list[Served] = field(default_factory=list)

    def note(self, request: Any, response: Any) -> None:
        method = request.method
        if method == "POST" and request.url.path.endswith("/mcp"):
            with contextlib.suppress(ValueError, AttributeError):  # a body that is not one JSON-RPC object
                method = f"POST {json.loads(request.content).get('method', 'response')}"
        replica = response.headers.get(REPLICA_HEADER)
        assert replica, f"{request.method} {request.url} came back without {REPLICA_HEADER}"
        self.seen.append(
            Served(
                replica,
                method,
                request.url.path,
                response.status_code,
                request.headers.get("mcp-session-id"),
                response.headers.get("mcp-session-id"),
            )
        )

    def replicas(self, *, method: str | None = None) -> set[str]:
        return {s.replica for s in self.seen if method is None or s.method == method}


def balanced_client(base: str, bearer: str, traffic: Traffic, mode: str = "auto", **options: Any) -> Any:
    """An MCP client through the balancer whose every response is noted in `traffic`."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def note(response: Any) -> None:
        traffic.note(response.request, response)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {bearer}"}, timeout=30.0, event_hooks={"response": [note]}
    )
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, **options)  # type: ignore[arg-type]


class NotingTransport(httpx.AsyncHTTPTransport):
    """The device's transport: notes which replica answered each of its requests."""

    def __init__(self, traffic: Traffic) -> None:
        super().__init__()
        self.traffic = traffic

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        self.traffic.note(request, response)
        return response


@dataclass
class Deployment:
    lb: str
    replicas: tuple[str, str]


@pytest.fixture
def deployment(redis_url: str, redis_prefix: str, database_url: str, tmp_path: Path) -> Iterator[Deployment]:
    """Two replicas on one Redis (a prefix of their own) and one fresh PostgreSQL schema, and the balancer."""
    env = child_env(
        TRULOOP_JWT_SECRET=SECRET,
        REDIS_URL=redis_url,
        TRULOOP_REDIS_PREFIX=redis_prefix,
        TRULOOP_STATE_KEYS="balancer-shared-state-key-" + "k" * 24,
    )
    common = ("--database-url", database_url, "--deferred-timeout", "10")
    with contextlib.ExitStack() as stack:
        bases = []
        for name in ("a", "b"):
            args = ("--data-dir", str(tmp_path / name), *common)
            base, _, _ = stack.enter_context(
                http_server_process(*args, env=env, stderr_path=tmp_path / f"{name}.stderr")
            )
            bases.append(base)
        lb = stack.enter_context(balancer(bases, tmp_path / "haproxy.log"))
        yield Deployment(lb, (bases[0], bases[1]))


async def spread(lb: str, traffic: Traffic, requests: int = 4) -> None:
    """Traffic of other clients: /healthz through the balancer (round-robin, so both replicas answer it)."""
    async with httpx.AsyncClient(event_hooks={"response": [lambda r: _note(traffic, r)]}) as http:
        for _ in range(requests):
            assert (await http.get(f"{lb}/healthz")).status_code == 200


async def _note(traffic: Traffic, response: httpx.Response) -> None:
    traffic.note(response.request, response)


async def test_a_handshake_era_session_stays_on_its_replica(deployment: Deployment) -> None:
    lb = deployment.lb
    user = "user-" + secrets.token_hex(4)
    session, others = Traffic(), Traffic()
    seen: list[str] = []
    declares = {"elicitation_callback": answering("accept", {"status": "granted"}, seen)}
    with anyio.fail_after(60):
        async with balanced_client(lb, token(sub=user), session, mode="legacy", **declares) as client:
            await spread(lb, others)
            tools = await client.list_tools()
            assert "get_calendar_events" in {tool.name for tool in tools.tools}
            for day in ("2026-03-10", "2026-03-11", "2026-03-12"):
                await spread(lb, others, 1)
                result = await client.call_tool("get_day_of_week", {"date": day})
                assert not result.is_error, result.content
            # an inline elicitation: the request rides the call's SSE stream, the answer is a POST of its own
            await spread(lb, others, 1)
            result = await client.call_tool("get_permission_status", PERMISSION)
            assert not result.is_error, result.content
            assert result.structured_content == {"status": "granted"}
            assert seen, "the elicitation was not asked"
            await spread(lb, others)

    initialize = [s for s in session.seen if s.method == "POST initialize"]
    assert len(initialize) == 1 and initialize[0].status == 200 and initialize[0].got_session
    sid, home = initialize[0].got_session, initialize[0].replica
    later = session.seen[1:]
    assert later and all(s.sent_session == sid for s in later), later
    assert {s.replica for s in later} == {home}, [(s.method, s.replica) for s in later]
    assert "POST response" in {s.method for s in later}, "the elicitation answer did not go through the balancer"
    assert {s.status for s in later if s.method.startswith("POST")} <= {200, 202}, later
    # while the session stayed home, the balancer spread everything else over both replicas
    assert others.replicas() == {"a", "b"}, [s.replica for s in others.seen]


async def test_a_device_call_through_the_balancer_lands_on_any_replica(deployment: Deployment) -> None:
    lb = deployment.lb
    user = "user-" + secrets.token_hex(4)
    device_traffic, calls, others = Traffic(), Traffic(), Traffic()
    device = DeviceSimulator(lb, token(sub=user), transport=NotingTransport(device_traffic))
    results = []
    with anyio.fail_after(90):
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(device.run, reconnect=False))
            with anyio.fail_after(10):
                await device.connected.wait()
            stream = device_traffic.replicas(method="GET")
            assert len(stream) == 1
            async with balanced_client(lb, token(sub=user), calls) as client:  # 2026-07-28: each call anywhere
                for _ in range(8):
                    results.append(await client.call_tool("get_calendar_events", CALENDAR))
                    if len(calls.replicas(method="POST tools/call")) == 2:
                        break
                    await spread(lb, others, 1)  # shifts the round-robin phase, should calls and answers alternate
            # and a handshake-era session's call, whichever replica holds the session
            async with balanced_client(lb, token(sub=user), calls, mode="legacy") as client:
                results.append(await client.call_tool("get_calendar_events", CALENDAR))
            tg.cancel_scope.cancel()

    for result in results:
        assert not result.is_error, result.content
        assert result.structured_content and result.structured_content["events"], result
    tool_calls = calls.replicas(method="POST tools/call")
    assert tool_calls == {"a", "b"}, [(s.method, s.replica) for s in calls.seen]
    assert tool_calls - stream, "no call was taken by the replica that does not hold the device stream"
    requests = [r for r in device.received if r.get("method") == "calendar.getEvents"]
    assert len(requests) == len(results) == len({r["id"] for r in requests})
    assert [a["status"] for a in device.answered] == [200] * len(results)
    assert len([s for s in device_traffic.seen if s.method == "POST"]) == len(results)


async def test_2026_requests_go_anywhere(deployment: Deployment) -> None:
    lb = deployment.lb
    user = "user-" + secrets.token_hex(4)
    traffic = Traffic()
    seen: list[str] = []
    declares = {"elicitation_callback": answering("accept", {"status": "restricted"}, seen)}
    with anyio.fail_after(60):
        async with balanced_client(lb, token(sub=user), traffic, **declares) as client:
            tools = await client.list_tools()
            assert "get_permission_status" in {tool.name for tool in tools.tools}
            for day in ("2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13"):
                result = await client.call_tool("get_day_of_week", {"date": day})
                assert not result.is_error, result.content
            # an elicitation round: InputRequiredResult sealed by one replica, the answer taken by whichever
            for _ in range(3):
                result = await client.call_tool("get_permission_status", PERMISSION)
                assert isinstance(result, types.CallToolResult) and not result.is_error, result
                assert result.structured_content == {"status": "restricted"}

    assert not any(s.sent_session or s.got_session for s in traffic.seen), "a 2026-07-28 request carried a session"
    assert {s.status for s in traffic.seen} == {200}, [(s.method, s.status) for s in traffic.seen]
    assert traffic.replicas(method="POST tools/call") == {"a", "b"}, [(s.method, s.replica) for s in traffic.seen]
    assert len(seen) == 3
    # the rounds: each first call answered InputRequiredResult, its repeat carried the sealed state to any replica
    calls = [s for s in traffic.seen if s.method == "POST tools/call"][4:]
    assert len(calls) == 6
    assert any(first.replica != second.replica for first, second in zip(calls[::2], calls[1::2], strict=True)), [
        s.replica for s in calls
    ]
