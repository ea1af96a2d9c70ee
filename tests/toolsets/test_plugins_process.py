"""`--plugin-isolation process`: each plugin version in a supervised worker process; crashes and hung calls
are contained (the call fails, the server goes on, the next call gets a fresh worker)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.plugin_files import LIFECYCLE, events, plugin_source, serving, write
from tests.support import error_of, eventually

pytestmark = pytest.mark.anyio

CRASHY = """
import os, time

def run(input_data, context):
    if input_data.get("crash"):
        os._exit(3)
    if input_data.get("hang"):
        time.sleep(600)
    print("a plugin printing to stdout must not break the protocol")
    return {"pid": os.getpid(), "version": context.version}
"""


async def test_a_plugin_runs_in_its_own_worker_process(tools: Path, data: Path) -> None:
    import os

    (tools / "crashy.py").write_text(plugin_source("crashy", CRASHY))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server, mode="legacy") as client:
        result = await client.call_tool("crashy", {})
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["pid"] != os.getpid()
        assert result.structured_content["version"] == server.deployment.plugins.versions()["crashy"].version


async def test_a_crash_fails_the_call_and_the_next_call_gets_a_fresh_worker(tools: Path, data: Path) -> None:
    (tools / "crashy.py").write_text(plugin_source("crashy", CRASHY))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        first = (await client.call_tool("crashy", {})).structured_content
        error = error_of(await client.call_tool("crashy", {"crash": True}))
        assert error["code"] == "handler_error" and "PluginWorkerCrashed" in error["reason"]
        again = (await client.call_tool("crashy", {})).structured_content
        assert first is not None and again is not None and again["pid"] != first["pid"]
        day = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        assert day.structured_content is not None  # the server itself never noticed


async def test_a_hung_call_times_out_at_once_and_its_worker_is_replaced(tools: Path, data: Path) -> None:
    (tools / "crashy.py").write_text(plugin_source("crashy", CRASHY, timeout_s=0.5))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        first = (await client.call_tool("crashy", {})).structured_content
        started = time.monotonic()
        error = error_of(await client.call_tool("crashy", {"hang": True}))
        assert error["code"] == "timeout" and time.monotonic() - started < 2.0
        again = (await client.call_tool("crashy", {})).structured_content
        assert first is not None and again is not None and again["pid"] != first["pid"]


async def test_an_exception_in_the_worker_is_a_handler_error_with_its_type(tools: Path, data: Path) -> None:
    body = "def run(input_data, context):\n    raise KeyError('s3cr3t')\n"
    (tools / "boom.py").write_text(plugin_source("boom", body))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        result = await client.call_tool("boom", {})
        error = error_of(result)
        assert error["code"] == "handler_error" and "KeyError" in error["reason"]
        assert "s3cr3t" not in str(result.content)


async def test_a_file_that_kills_its_importer_is_reported_and_never_published(tools: Path, data: Path) -> None:
    (tools / "suicide.py").write_text("import os\nos._exit(9)\n")
    (tools / "fine.py").write_text(plugin_source("fine", "def run(i, c):\n    return {'ok': True}\n"))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        assert [error.path.name for error in server.deployment.plugins.errors()] == ["suicide.py"]
        assert (await client.call_tool("fine", {})).structured_content == {"ok": True}


async def test_reload_in_process_isolation_keeps_calls_on_their_version_and_closes_once(
    tools: Path, data: Path
) -> None:
    path = tools / "counter.py"
    path.write_text(plugin_source("counter", LIFECYCLE.format(tag="v1")))
    async with serving(tools, data, plugin_isolation="process") as server, Client(server) as client:
        v1 = server.deployment.plugins.versions()["counter"].version
        results: list[object] = []

        async def slow() -> None:
            results.append((await client.call_tool("counter", {"sleep": 0.6})).structured_content)

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            await eventually(lambda: ("start", v1) in events(data, "counter"), 5)
            write(path, plugin_source("counter", LIFECYCLE.format(tag="v2")))
            await eventually(lambda: server.deployment.plugins.versions()["counter"].version != v1, 5)
        assert results == [{"tag": "v1", "version": v1}]
        v2 = server.deployment.plugins.versions()["counter"].version
        assert (await client.call_tool("counter", {})).structured_content == {"tag": "v2", "version": v2}
    log = events(data, "counter")
    for version in (v1, v2):
        assert log.count(("create", version)) == 1 and log.count(("close", version)) == 1
    assert log.index(("end", v1)) < log.index(("close", v1))
