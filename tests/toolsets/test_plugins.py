"""Custom tool plugins (`--tools-dir`, in-process isolation) through the MCP `Client`: publication, validation,
errors, hot reload, lifecycle, timeouts and confirmation, with real plugin files written by the tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from tests.plugin_files import LIFECYCLE, events, plugin_source, serving, write
from tests.support import MODES, answering, error_of, eventually

pytestmark = pytest.mark.anyio

ECHO = """
def run(input_data, context):
    return {"text": input_data["text"], "caller": context.caller_id}
"""
TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to echo"}},
    "required": ["text"],
    "additionalProperties": False,
}


def names(result: types.ListToolsResult) -> set[str]:
    return {tool.name for tool in result.tools}


@MODES
async def test_a_plugin_is_published_and_called_like_any_tool(mode: str, tools: Path, data: Path) -> None:
    output = {"type": "object", "properties": {"text": {"type": "string"}, "caller": {"type": "string"}}}
    spec = {"input_schema": TEXT_SCHEMA, "output_schema": output, "annotations": {"readOnlyHint": True}}
    (tools / "echo_text.py").write_text(plugin_source("echo_text", ECHO, **spec))
    async with serving(tools, data) as server, Client(server, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        echo = listed["echo_text"]
        assert "get_day_of_week" in listed  # the built-in tools are still there
        assert echo.description == "Test plugin echo_text."
        assert echo.input_schema == TEXT_SCHEMA and echo.output_schema == output
        assert echo.annotations is not None and echo.annotations.read_only_hint is True
        assert echo.annotations.destructive_hint is False
        result = await client.call_tool("echo_text", {"text": "안녕"})
        assert not result.is_error
        assert result.structured_content == {"text": "안녕", "caller": "alice"}
        assert isinstance(result.content[0], types.TextContent) and "안녕" in result.content[0].text


async def test_a_result_that_is_not_an_object_is_wrapped(tools: Path, data: Path) -> None:
    (tools / "shout.py").write_text(plugin_source("shout", "def run(input_data, context):\n    return 'HEY'\n"))
    async with serving(tools, data) as server, Client(server) as client:
        result = await client.call_tool("shout", {})
        assert result.structured_content == {"result": "HEY"}


@MODES
async def test_arguments_are_checked_against_the_json_schema(mode: str, tools: Path, data: Path) -> None:
    (tools / "echo_text.py").write_text(plugin_source("echo_text", ECHO, input_schema=TEXT_SCHEMA))
    async with serving(tools, data) as server, Client(server, mode=mode) as client:
        missing = error_of(await client.call_tool("echo_text", {}))
        assert missing["code"] == "validation" and "'text' is a required property" in missing["reason"]
        wrong = error_of(await client.call_tool("echo_text", {"text": 7}))
        assert wrong["code"] == "validation" and "text:" in wrong["reason"]
        extra = await client.call_tool("echo_text", {"text": "hi", "shout": True})  # ignored, as for every tool
        assert extra.structured_content == {"text": "hi", "caller": "alice"}


async def test_a_result_off_its_output_schema_is_a_handler_error(tools: Path, data: Path) -> None:
    body = "def run(input_data, context):\n    return {'count': 'many'}\n"
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    (tools / "count.py").write_text(plugin_source("count", body, output_schema=schema))
    async with serving(tools, data) as server, Client(server) as client:
        error = error_of(await client.call_tool("count", {}))
        assert error["code"] == "handler_error" and "output_schema" in error["reason"]
        # where and which rule, never the value found: a result may carry a caller's words, read by others as feedback
        assert 'count: fails type "integer"' in error["reason"] and "many" not in error["reason"]


async def test_an_exception_is_a_handler_error_that_shows_only_its_type(tools: Path, data: Path) -> None:
    body = "def run(input_data, context):\n    raise ValueError('the secret s3cr3t leaked')\n"
    (tools / "boom.py").write_text(plugin_source("boom", body))
    async with serving(tools, data) as server, Client(server) as client:
        result = await client.call_tool("boom", {})
        error = error_of(result)
        assert error["code"] == "handler_error" and "ValueError" in error["reason"]
        assert "s3cr3t" not in str(result.content)
        assert (await client.call_tool("get_day_of_week", {"date": "2026-03-10"})).structured_content is not None


async def test_added_edited_and_deleted_files_take_effect_within_a_second(tools: Path, data: Path) -> None:
    notices: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notices.append(message)

    async with serving(tools, data) as server, Client(server, mode="legacy", message_handler=on_message) as client:
        assert "greet" not in names(await client.list_tools())
        path = tools / "greet.py"
        started = time.monotonic()
        write(path, plugin_source("greet", "def run(input_data, context):\n    return {'v': 1}\n"))
        await eventually(lambda: len(notices) >= 1, 2)
        assert time.monotonic() - started < 1.0
        assert "greet" in names(await client.list_tools())
        assert (await client.call_tool("greet", {})).structured_content == {"v": 1}

        started = time.monotonic()
        write(path, plugin_source("greet", "def run(input_data, context):\n    return {'v': 2}\n"))
        await eventually(lambda: len(notices) >= 2, 2)
        assert time.monotonic() - started < 1.0
        assert (await client.call_tool("greet", {})).structured_content == {"v": 2}

        path.unlink()
        await eventually(lambda: len(notices) >= 3, 2)
        assert "greet" not in names(await client.list_tools())
        assert error_of(await client.call_tool("greet", {}))["code"] == "unknown_tool"


async def test_a_broken_version_is_reported_and_the_previous_one_keeps_serving(tools: Path, data: Path) -> None:
    path = tools / "greet.py"
    path.write_text(plugin_source("greet", "def run(input_data, context):\n    return {'v': 1}\n"))
    async with serving(tools, data) as server, Client(server) as client:
        broken_versions = [
            "TOOL_SPEC = {'name': 'greet'\n",  # a syntax error
            plugin_source("greet", "def run(input_data, context):\n    return {}\n", input_schema={"type": "nope"}),
            plugin_source("greet", "raise RuntimeError('at import')\n"),
            plugin_source("greet", "x = 1\n"),  # neither run nor create
            plugin_source("greet", "def run(i, c):\n    return {}\n", annotations={"destructive": True}),
        ]
        reasons = []
        for broken in broken_versions:
            write(path, broken)
            await eventually(lambda: any(e.path == path for e in server.deployment.plugins.errors()), 2)
            reasons.append(server.deployment.plugins.errors()[0].message)
            assert (await client.call_tool("greet", {})).structured_content == {"v": 1}
            write(path, plugin_source("greet", "def run(input_data, context):\n    return {'v': 1}\n"))
            await eventually(lambda: not server.deployment.plugins.errors(), 2)
        assert "syntax error" in reasons[0] and "input_schema" in reasons[1] and "RuntimeError" in reasons[2]
        assert "neither run" in reasons[3] and "destructiveHint" in reasons[4]


async def test_names_taken_by_a_built_in_or_another_plugin_are_refused(tools: Path, data: Path) -> None:
    (tools / "a_day.py").write_text(plugin_source("get_day_of_week", "def run(i, c):\n    return {'fake': 1}\n"))
    (tools / "b_first.py").write_text(plugin_source("shared", "def run(i, c):\n    return {'from': 'b'}\n"))
    (tools / "c_second.py").write_text(plugin_source("shared", "def run(i, c):\n    return {'from': 'c'}\n"))
    async with serving(tools, data) as server, Client(server) as client:
        reported = {error.path.name: error.message for error in server.deployment.plugins.errors()}
        assert "built-in" in reported["a_day.py"]
        assert "already served by b_first.py" in reported["c_second.py"]
        day = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        assert day.structured_content is not None and day.structured_content["day_of_week"] == "Tuesday"
        assert (await client.call_tool("shared", {})).structured_content == {"from": "b"}
        (tools / "b_first.py").unlink()  # the name is free again: the refused file takes it
        await eventually(lambda: server.deployment.plugins.versions()["shared"].source.path.name == "c_second.py", 2)
        assert (await client.call_tool("shared", {})).structured_content == {"from": "c"}


async def test_a_call_in_flight_finishes_on_its_version_and_each_version_is_closed_once(
    tools: Path, data: Path
) -> None:
    path = tools / "counter.py"
    path.write_text(plugin_source("counter", LIFECYCLE.format(tag="v1")))
    async with serving(tools, data) as server, Client(server) as client:
        v1 = server.deployment.plugins.versions()["counter"].version
        slow: dict[str, Any] = {}

        async def slow_call() -> None:
            slow["result"] = await client.call_tool("counter", {"sleep": 0.8})

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_call)
            await eventually(lambda: ("start", v1) in events(data, "counter"), 2)
            write(path, plugin_source("counter", LIFECYCLE.format(tag="v2")))
            await eventually(lambda: server.deployment.plugins.versions()["counter"].version != v1, 2)
            assert (await client.call_tool("counter", {})).structured_content["tag"] == "v2"  # type: ignore[index]
            assert ("close", v1) not in events(data, "counter")  # v1 still has a call running
        assert slow["result"].structured_content == {"tag": "v1", "version": v1}
        v2 = server.deployment.plugins.versions()["counter"].version
    log = events(data, "counter")
    assert log.index(("end", v1)) < log.index(("close", v1))
    for version in (v1, v2):
        assert log.count(("create", version)) == 1 and log.count(("close", version)) == 1


async def test_concurrent_calls_through_edit_break_fix_delete(tools: Path, data: Path) -> None:
    path = tools / "counter.py"
    path.write_text(plugin_source("counter", LIFECYCLE.format(tag="v1")))
    outcomes: list[Any] = []
    async with serving(tools, data) as server, Client(server, mode="legacy") as client:
        done = anyio.Event()

        async def caller() -> None:
            while not done.is_set():
                result = await client.call_tool("counter", {"sleep": 0.01})
                outcomes.append(result.structured_content if not result.is_error else error_of(result)["code"])

        async def editor() -> None:
            steps = [
                (plugin_source("counter", LIFECYCLE.format(tag="v2")), "v2"),
                ("TOOL_SPEC = {", None),  # broken: v2 keeps serving
                (plugin_source("counter", LIFECYCLE.format(tag="v3")), "v3"),
                (None, None),  # deleted
                (plugin_source("counter", LIFECYCLE.format(tag="v4")), "v4"),
            ]
            for step, tag in steps:
                if step is None:
                    path.unlink()
                else:
                    write(path, step)
                await anyio.sleep(0.4)  # calls keep running meanwhile, whatever is served
                if tag is not None:  # then wait (bounded) until the new version has answered a call
                    # 45 s: under eight busy callers on a loaded 2-core machine a version was seen to take over 20 s
                    await eventually(lambda tag=tag: any(isinstance(o, dict) and o["tag"] == tag for o in outcomes), 45)
            done.set()

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(caller)
            tg.start_soon(editor)
    tags = [o["tag"] for o in outcomes if isinstance(o, dict)]
    assert {"v1", "v2", "v3", "v4"} <= set(tags)
    assert all(o in ("unknown_tool", "tool_error") for o in outcomes if not isinstance(o, dict))
    assert all(set(o) == {"tag", "version"} for o in outcomes if isinstance(o, dict))  # never half a tool
    log = events(data, "counter")
    created = [version for event, version in log if event == "create"]
    assert len(created) == 4 and len(set(created)) == 4  # v1..v4, each created once (broken never)
    for version in created:
        assert log.count(("close", version)) == 1
        starts = [i for i, e in enumerate(log) if e == ("start", version)]
        assert all(i < log.index(("close", version)) for i in starts)  # never run after its close


@pytest.mark.parametrize("kind", ["sync", "async_blocking"])
async def test_a_call_past_timeout_s_returns_timeout_at_once_and_the_loop_stays_free(
    kind: str, tools: Path, data: Path
) -> None:
    body = {
        "sync": "import time\ndef run(input_data, context):\n    time.sleep(5)\n    return {}\n",
        "async_blocking": "import time\nasync def run(input_data, context):\n    time.sleep(5)\n    return {}\n",
    }[kind]
    (tools / "slow.py").write_text(plugin_source("slow", body, timeout_s=0.3))
    async with serving(tools, data) as server, Client(server) as client:
        started = time.monotonic()
        lags: list[float] = []

        async def probe() -> None:
            while time.monotonic() - started < 0.6:
                before = time.monotonic()
                await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
                lags.append(time.monotonic() - before)
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            tg.start_soon(probe)
            error = error_of(await client.call_tool("slow", {}))
            elapsed = time.monotonic() - started
        assert error["code"] == "timeout" and error["retryable"] is False
        assert 0.3 <= elapsed < 1.5
        assert lags and max(lags) < 0.25  # the event loop was never blocked by the plugin


async def test_a_destructive_plugin_is_confirmed(tools: Path, data: Path) -> None:
    body = "def run(input_data, context):\n    open(context.data_dir / 'wiped', 'w').close()\n    return {'ok': True}\n"
    (tools / "wipe.py").write_text(plugin_source("wipe", body, annotations={"destructiveHint": True}))
    asked: list[str] = []
    async with serving(tools, data) as server:
        async with Client(server, mode="legacy", elicitation_callback=answering("decline", seen=asked)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert listed["wipe"].annotations.destructive_hint is True  # type: ignore[union-attr]
            result = await client.call_tool("wipe", {})
            assert error_of(result)["code"] == "cancelled" and asked
            assert not (data / "plugins" / "wipe" / "wiped").exists()
        async with Client(server, mode="legacy", elicitation_callback=answering("accept", {"confirm": True})) as client:
            assert (await client.call_tool("wipe", {})).structured_content == {"ok": True}


async def test_each_plugin_joins_the_profiles_it_asks_for(tools: Path, data: Path) -> None:
    body = "def run(input_data, context):\n    return {}\n"
    (tools / "m.py").write_text(plugin_source("only_member", body))
    (tools / "g.py").write_text(plugin_source("only_guest", body, profiles=["guest"]))
    (tools / "s.py").write_text(plugin_source("safe_too", body, profiles=["notification-safe"]))
    async with serving(tools, data) as server:
        profiles = server.deployment.profiles
        member, guest, safe = (set(profiles[name].names()) for name in ("member", "guest", "notification-safe"))
        assert {"only_member", "safe_too"} <= member and "only_guest" not in member
        assert "only_guest" in guest and not {"only_member", "safe_too"} & guest
        assert "safe_too" in safe and "only_member" not in safe
    plugins = {"only_member", "only_guest", "safe_too"}  # the server stopped: its plugins are gone
    assert not plugins & set(profiles["member"].names()) and not plugins & set(profiles["guest"].names())


async def test_the_context_a_plugin_receives(tools: Path, data: Path) -> None:
    body = """
    async def run(input_data, context):
        await context.report_progress(1, 2, "half way")
        context.report_progress(2, 2)
        context.logger.info("hello from the plugin")
        (context.data_dir / "note.txt").write_text("kept")
        return {"caller": context.caller_id, "role": context.role, "request": context.request_id,
                "tool": context.tool_name, "version": context.version, "data_dir": str(context.data_dir)}
    """
    (tools / "ctx.py").write_text(plugin_source("ctx", body))
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with serving(tools, data) as server, Client(server, mode="legacy") as client:
        result = await client.call_tool("ctx", {}, progress_callback=on_progress)
        seen = result.structured_content
        assert seen is not None
        assert seen["caller"] == "alice" and seen["role"] == "member" and seen["request"]
        assert seen["tool"] == "ctx" and seen["version"] == server.deployment.plugins.versions()["ctx"].version
        assert Path(seen["data_dir"]) == data / "plugins" / "ctx"
        assert (data / "plugins" / "ctx" / "note.txt").read_text() == "kept"
        await eventually(lambda: len(progress) == 2, 2)
        assert progress == [(1, 2, "half way"), (2, 2, None)]


async def test_entry_points_of_every_shape(tools: Path, data: Path) -> None:
    one_argument = "def run(input_data):\n    return {'got': input_data}\n"
    async_object = """
    import asyncio

    class Client:
        async def run(self, input_data, context):
            await asyncio.sleep(0)
            return {"opened": self.opened}

        async def close(self):
            with open(self.log, "a") as log:
                log.write("closed\\n")

    async def create(context):
        client = Client()
        client.opened = True
        client.log = context.data_dir / "closed.log"
        return client
    """
    (tools / "one.py").write_text(plugin_source("one", one_argument))
    (tools / "async_object.py").write_text(plugin_source("async_object", async_object))
    async with serving(tools, data) as server, Client(server) as client:
        assert (await client.call_tool("one", {"a": 1})).structured_content == {"got": {"a": 1}}
        assert (await client.call_tool("async_object", {})).structured_content == {"opened": True}
    assert (data / "plugins" / "async_object" / "closed.log").read_text() == "closed\n"
