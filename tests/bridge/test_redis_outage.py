"""Redis stopped mid-test and started again: deferred tools answer a clear error meanwhile, the
rest of the server keeps working, and everything recovers by itself afterwards."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bridge.jsonrpc import RpcResponse
from tests.support import error_of, eventually, server_for, wait_for_line

READY = re.compile(r"ready to accept connections", re.IGNORECASE)  # 7.0: "The server is now ready ..."
CONFIRM = {"notification_message": "Asking you...", "title": "Share", "message": "Share your calendar?"}


async def online_now(bridge: Any, user_id: str) -> bool:
    """Presence as the recovering bridge sees it: a command that meets a connection from before the restart
    fails once (redis-py does not retry it), which here means "not yet", not a failed test."""
    import redis.exceptions

    try:
        return bool(await bridge.backend.online(user_id))
    except redis.exceptions.ConnectionError:
        return False


class PrivateRedis:
    """A redis-server of this test's own on a unix socket (no TCP port to race for; the shared one is never
    stopped), restarted on the same socket. A short directory: a socket path is limited to ~100 bytes."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (CI installs it; apt-get install redis-server)")
        self.binary = binary
        self.workdir = workdir
        self.socket = workdir / "redis.sock"
        self.starts = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def start(self) -> None:
        self.starts += 1
        log = self.workdir / f"redis-{self.starts}.log"
        self.proc = subprocess.Popen(
            [self.binary, "--port", "0", "--unixsocket", str(self.socket), "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir), "--logfile", str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_line(log, READY, self.proc, timeout=10)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    with tempfile.TemporaryDirectory(prefix="redis-") as workdir:
        redis = PrivateRedis(Path(workdir))
        redis.start()
        try:
            yield redis
        finally:
            redis.stop()


async def resilient_device(server: Any, answered: list[str]) -> None:
    """A device that keeps reconnecting, as the app does, and confirms everything."""
    bridge = server.bridge
    while True:
        try:
            async with bridge.device_stream("alice") as envelopes:
                async for envelope in envelopes:
                    request = json.loads(envelope["data"])
                    body = {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": True}}
                    await bridge.answer("alice", RpcResponse.model_validate(body))
                    answered.append(request["id"])
        except Exception:
            await anyio.sleep(0.1)


async def call_until(client: Client, ok: bool, seconds: float) -> Any:
    with anyio.fail_after(seconds):
        while True:
            result = await client.call_tool("confirm_interaction", CONFIRM)
            if (not result.is_error) == ok:
                return result
            await anyio.sleep(0.2)


@pytest.mark.anyio
async def test_redis_outage_gives_clear_errors_then_recovers(private_redis: PrivateRedis, tmp_path: Path) -> None:
    server = server_for(user="alice", redis_url=private_redis.url, data_dir=tmp_path / "data")
    bridge = server.bridge
    assert bridge is not None
    bridge.heartbeat = 0.2
    bridge.poll_interval = 0.2
    answered: list[str] = []
    async with bridge.running(), anyio.create_task_group() as tg:
        tg.start_soon(resilient_device, server, answered)
        async with Client(server, mode="legacy") as client:
            before = await call_until(client, ok=True, seconds=10)
            assert before.structured_content == {"confirmed": True}

            private_redis.stop()
            with anyio.fail_after(5):  # fails fast, never hangs
                during = await client.call_tool("confirm_interaction", CONFIRM)
            assert error_of(during)["code"] == "bridge_unavailable"
            assert error_of(during)["retryable"] is True
            assert "Redis" in error_of(during)["reason"]
            unaffected = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
            assert unaffected.structured_content == {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}

            private_redis.start()  # same port, empty (no persistence): presence and subscriptions come back
            after = await call_until(client, ok=True, seconds=15)
            assert after.structured_content == {"confirmed": True}
        tg.cancel_scope.cancel()
    assert len(answered) >= 2


@pytest.mark.anyio
async def test_redis_restart_fails_lost_calls_fast_and_reannounces_devices(
    private_redis: PrivateRedis, tmp_path: Path
) -> None:
    server = server_for(user="alice", redis_url=private_redis.url, data_dir=tmp_path / "data", deferred_timeout=60)
    bridge = server.bridge
    assert bridge is not None
    bridge.heartbeat = 60.0  # presence must come back from the reconnect, not from a heartbeat
    bridge.poll_interval = 0.2
    answering = anyio.Event()
    seen: list[str] = []
    delivered = anyio.Event()

    async def device() -> None:  # one connection for the whole test, as a phone on a good network
        async with bridge.device_stream("alice") as envelopes:
            async for envelope in envelopes:
                request = json.loads(envelope["data"])
                seen.append(request["id"])
                delivered.set()
                if answering.is_set():
                    body = {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": True}}
                    for _ in range(3):  # as the app does on a 503
                        try:
                            await bridge.answer("alice", RpcResponse.model_validate(body))
                            break
                        except Exception:
                            await anyio.sleep(0.1)

    async with bridge.running(), anyio.create_task_group() as tg:
        tg.start_soon(device)
        async with Client(server, mode="legacy") as client:
            outcome: dict[str, Any] = {}
            returned = anyio.Event()

            async def waiting_call() -> None:
                outcome["result"] = await client.call_tool("confirm_interaction", CONFIRM)
                returned.set()

            await eventually(lambda: bridge.backend.online("alice"))
            tg.start_soon(waiting_call)
            with anyio.fail_after(10):
                await delivered.wait()
            private_redis.stop()
            private_redis.start()  # no persistence: the pending call and the presence are gone
            with anyio.fail_after(20):  # well before the 60 s deferred timeout: the lost call fails fast
                await returned.wait()
            lost = outcome["result"]
            assert error_of(lost)["code"] == "bridge_unavailable" and error_of(lost)["retryable"] is True

            answering.set()
            with anyio.fail_after(25):  # presence comes back from the reconnect, not the 60 s heartbeat
                await eventually(lambda: online_now(bridge, "alice"), 20)
                after = await client.call_tool("confirm_interaction", CONFIRM)
            assert after.structured_content == {"confirmed": True}, after.content
        tg.cancel_scope.cancel()
