"""A plugin cannot end the server, in either isolation mode: `SystemExit`, `KeyboardInterrupt`, `GeneratorExit` (sync
and async) and `os._exit` end only their call; a worker crash fails only the call that caused it (bystanders run
again or get a retryable code); results that are not JSON are `handler_error`s; and a stdio server whose input ends
(or that gets SIGTERM) exits within a few seconds while a plugin thread is stuck in `time.sleep(100)` or a busy loop.
Through the MCP `Client` in process, and through a real stdio subprocess."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.plugin_files import StdioSession, plugin_source, plugin_stdio_server, serving
from tests.support import error_of

pytestmark = pytest.mark.anyio
ISOLATIONS = ["inprocess", "process"]

RAISER = """
import argparse

def run(input_data, context):
    what = input_data.get("raise")
    if what == "argparse":
        parser = argparse.ArgumentParser(prog="raiser")
        parser.add_argument("--count", type=int, required=True)
        parser.parse_args(["--count", "many"])  # argparse's answer to bad input: SystemExit(2)
    if what == "exit":
        raise SystemExit(3)
    if what == "interrupt":
        raise KeyboardInterrupt
    if what == "generator":
        raise GeneratorExit
    return {"ok": True}
"""
ASYNC_RAISER = RAISER.replace("def run(", "async def run(")
STUCK = """
import time

def run(input_data, context):
    if input_data.get("busy"):
        while True:
            pass
    time.sleep(100)
    return {"late": True}
"""
# One tool whose calls run side by side in one worker: `crash` ends the worker with os._exit after `delay`.
CRASHER = """
import os, time

def run(input_data, context):
    time.sleep(input_data.get("delay", 0))
    if input_data.get("crash"):
        os._exit(7)
    return {"pid": os.getpid(), "n": input_data.get("n")}
"""
NOT_JSON = """
import math

def run(input_data, context):
    kind = input_data["kind"]
    if kind == "surrogate":
        return {"text": "broken \\udcff text"}
    if kind == "surrogate_key":
        return {"\\ud800": 1}
    if kind == "nan":
        return {"value": math.nan}
    if kind == "object":
        return {"value": object()}
    if kind == "cycle":
        loop = []
        loop.append(loop)
        return {"value": loop}
    return {"ok": True}
"""


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("body", [RAISER, ASYNC_RAISER], ids=["sync", "async"])
async def test_system_exit_and_keyboard_interrupt_end_only_their_call(
    isolation: str, body: str, tools: Path, data: Path
) -> None:
    (tools / "raiser.py").write_text(plugin_source("raiser", body))
    async with serving(tools, data, plugin_isolation=isolation) as server, Client(server) as client:
        for what, name in (
            ("argparse", "SystemExit"),
            ("exit", "SystemExit"),
            ("interrupt", "KeyboardInterrupt"),
            ("generator", "GeneratorExit"),
        ):
            error = error_of(await client.call_tool("raiser", {"raise": what}))
            assert error["code"] == "handler_error" and name in error["reason"], (what, error)
            assert (await client.call_tool("raiser", {})).structured_content == {"ok": True}
        day = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        assert day.structured_content is not None and day.structured_content["day_of_week"] == "Tuesday"


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_a_system_exit_in_create_is_a_load_error_not_the_end(isolation: str, tools: Path, data: Path) -> None:
    (tools / "bad.py").write_text(plugin_source("bad", "def create(context):\n    raise SystemExit(1)\n"))
    (tools / "fine.py").write_text(plugin_source("fine", "def run(i, c):\n    return {'ok': True}\n"))
    async with serving(tools, data, plugin_isolation=isolation) as server, Client(server) as client:
        errors = server.deployment.plugins.errors()
        assert [error.path.name for error in errors] == ["bad.py"] and "SystemExit" in errors[0].message
        assert (await client.call_tool("fine", {})).structured_content == {"ok": True}


async def test_a_keyboard_interrupt_at_import_is_a_load_error(tools: Path, data: Path) -> None:
    (tools / "bad.py").write_text("raise KeyboardInterrupt\n")
    (tools / "fine.py").write_text(plugin_source("fine", "def run(i, c):\n    return {'ok': True}\n"))
    async with serving(tools, data) as server, Client(server) as client:
        assert [error.path.name for error in server.deployment.plugins.errors()] == ["bad.py"]
        assert (await client.call_tool("fine", {})).structured_content == {"ok": True}


@pytest.mark.parametrize("hints", [{"idempotentHint": True}, {}], ids=["idempotent", "no-hints"])
async def test_a_worker_crash_fails_only_the_call_that_caused_it(
    hints: dict[str, Any], tools: Path, data: Path
) -> None:
    (tools / "crasher.py").write_text(plugin_source("crasher", CRASHER, annotations=hints))
    results: dict[int, Any] = {}
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        first = (await client.call_tool("crasher", {})).structured_content
        assert first is not None

        async def call(n: int, arguments: dict[str, Any]) -> None:
            results[n] = await client.call_tool("crasher", {"n": n, **arguments})

        async with anyio.create_task_group() as tg:
            for n in range(4):
                tg.start_soon(call, n, {"delay": 1.0})  # bystanders, running when the worker dies
            await anyio.sleep(0.3)
            tg.start_soon(call, 99, {"crash": True, "delay": 0.1})
        culprit = error_of(results.pop(99))
        assert culprit["code"] == "handler_error" and "PluginWorkerCrashed" in culprit["reason"]
        assert culprit["retryable"] is False
        for n, result in results.items():
            if hints:  # idempotent: run again on a fresh worker, and it succeeds
                assert not result.is_error, (n, result)
                assert result.structured_content["n"] == n and result.structured_content["pid"] != first["pid"]
            else:  # it may have run: a retryable answer, never PluginWorkerCrashed
                error = error_of(result)
                assert error["retryable"] is True and "PluginWorkerCrashed" not in error["reason"], error
        again = (await client.call_tool("crasher", {"n": 5})).structured_content
        assert again is not None and again["n"] == 5


async def test_a_timed_out_call_does_not_take_its_bystanders_down(tools: Path, data: Path) -> None:
    (tools / "crasher.py").write_text(
        plugin_source("crasher", CRASHER, timeout_s=2.0, annotations={"readOnlyHint": True})
    )
    results: dict[int, Any] = {}
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        assert (await client.call_tool("crasher", {})).structured_content is not None

        async def call(n: int, delay: float) -> None:
            results[n] = await client.call_tool("crasher", {"n": n, "delay": delay})

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, 0, 10.0)  # hangs past its timeout (2 s): its worker is killed
            await anyio.sleep(1.6)
            tg.start_soon(call, 1, 0.6)  # in flight when the worker is killed, then run again on a fresh one
        assert error_of(results[0])["code"] == "timeout"
        assert results[1].structured_content is not None and results[1].structured_content["n"] == 1


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_results_that_are_not_json_are_handler_errors(isolation: str, tools: Path, data: Path) -> None:
    (tools / "odd.py").write_text(plugin_source("odd", NOT_JSON))
    async with serving(tools, data, plugin_isolation=isolation) as server, Client(server) as client:
        for kind in ("surrogate", "surrogate_key", "nan", "object", "cycle"):
            error = error_of(await client.call_tool("odd", {"kind": kind}))
            assert error["code"] == "handler_error", (kind, error)
            assert "not JSON data" in error["reason"], (kind, error)
        assert (await client.call_tool("odd", {"kind": "fine"})).structured_content == {"ok": True}


# -- a real stdio subprocess ---------------------------------------------------------------------------------------


def _call(session: StdioSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = session.request("tools/call", {"name": name, "arguments": arguments})
    assert "result" in reply, reply
    return reply["result"]


def _envelope(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError"), result
    (value,) = [v for k, v in result["_meta"].items() if "error" in k]
    return value


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_stdio_server_answers_after_a_system_exit_and_keyboard_interrupt(
    isolation: str, tools: Path, tmp_path: Path
) -> None:
    (tools / "raiser.py").write_text(plugin_source("raiser", RAISER))
    proc = plugin_stdio_server(tools, tmp_path / "data", isolation)
    try:
        session = StdioSession(proc)
        for what, name in (("argparse", "SystemExit"), ("interrupt", "KeyboardInterrupt"), ("exit", "SystemExit")):
            error = _envelope(_call(session, "raiser", {"raise": what}))
            assert error["code"] == "handler_error" and name in error["reason"], error  # not a crashed worker
            assert _call(session, "raiser", {})["structuredContent"] == {"ok": True}
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("stuck", ["sleep", "busy"])
@pytest.mark.parametrize("stop", ["eof", "sigterm"])
def test_stdio_server_exits_promptly_while_a_plugin_thread_is_stuck(
    isolation: str, stuck: str, stop: str, tools: Path, tmp_path: Path
) -> None:
    (tools / "stuck.py").write_text(plugin_source("stuck", STUCK, timeout_s=0.5))
    proc = plugin_stdio_server(tools, tmp_path / "data", isolation)
    try:
        session = StdioSession(proc)
        assert _envelope(_call(session, "stuck", {"busy": stuck == "busy"}))["code"] == "timeout"
        day = _call(session, "get_day_of_week", {"date": "2026-03-10"})
        assert day["structuredContent"]["day_of_week"] == "Tuesday"  # the plugin's thread is still running
        started = time.monotonic()
        if stop == "eof":
            assert proc.stdin is not None
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(15)
        assert time.monotonic() - started < 3.0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_stdio_call_in_flight_at_end_of_input_is_answered_and_the_server_exits(
    isolation: str, tools: Path, tmp_path: Path
) -> None:
    """The host closes stdin while a stuck call runs: the call is answered (timeout), and the process ends."""
    (tools / "stuck.py").write_text(plugin_source("stuck", STUCK, timeout_s=0.8))
    proc = plugin_stdio_server(tools, tmp_path / "data", isolation)
    try:
        session = StdioSession(proc)
        session.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "stuck", "arguments": {}}})
        started = time.monotonic()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        replies = [json.loads(line) for line in proc.stdout.read().splitlines() if line.strip()]
        proc.wait(15)
        assert time.monotonic() - started < 3.0
        (reply,) = [r for r in replies if r.get("id") == 99]
        assert _envelope(reply["result"])["code"] == "timeout"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
