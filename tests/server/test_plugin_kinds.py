"""Plugins that serve resources, resource templates and prompts beside tools, over the real MCP front in both eras:
listed, read and got, completed, hot-reloaded with `list_changed` and `resources/updated` to the sessions that
should hear, and a plugin's context reaching the client (progress, log messages, elicitation, sampling, roots).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.plugin_files import serving, write
from tests.support import MODES, answering, eventually

pytestmark = pytest.mark.anyio

TOOL = """
TOOL_SPEC = {"name": "show_picture", "description": "A picture and a word.", "returns": "content",
             "input_schema": {"type": "object", "properties": {}}}

def run(input_data, context):
    return [{"type": "text", "text": "a dot"}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
"""
RESOURCE = """
RESOURCE_SPEC = {"uri": "notes://today", "name": "today", "title": "Today / 오늘", "mime_type": "text/plain"}

def run(params, context):
    return "VERSION"
"""
BINARY = """
RESOURCE_SPEC = {"uri": "notes://dot.png", "name": "dot", "mime_type": "image/png"}

def run(params, context):
    return b"\\x89PNG"
"""
TEMPLATE = """
RESOURCE_SPEC = {"uri_template": "notes://day/{date}", "name": "day", "mime_type": "application/json",
                 "completions": {"date": ["2026-03-01", "2026-03-02", "2027-01-01"]}}

def run(params, context):
    return {"text": '{"date": "' + params["date"] + '"}'}
"""
PROMPT = """
PROMPT_SPEC = {"name": "greet", "title": "Greet / 인사", "description": "Say hello to someone.",
               "arguments": [{"name": "who", "description": "Whom to greet", "required": True},
                             {"name": "lang", "description": "ko or en"}],
               "completions": {"lang": ["ko", "en"]}}

def run(arguments, context):
    hello = "안녕하세요" if arguments.get("lang") == "ko" else "Hello"
    return [{"role": "user", "content": f"{hello}, {arguments['who']}!"},
            {"role": "assistant", "content": {"type": "text", "text": "OK"}}]
"""
ASKING = """
import json

TOOL_SPEC = {"name": "ask_and_tell", "description": "Reports progress, logs and asks the user.", "asks_client": True,
             "input_schema": {"type": "object", "properties": {}}}

def run(input_data, context):
    runs = context.data_dir / "runs"
    runs.write_text(str(int(runs.read_text()) + 1) if runs.exists() else "1")
    context.report_progress(1, 2, "half way")
    context.log("info", "asking the user")
    answer = context.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                                   "required": ["name"]}, key="name")
    context.report_progress(2, 2)
    return {"action": answer["action"], "name": (answer.get("content") or {}).get("name")}
"""
SAMPLING = """
TOOL_SPEC = {"name": "needs_sampling", "description": "Asks the client's model.", "asks_client": True,
             "input_schema": {"type": "object", "properties": {}}}

def run(input_data, context):
    answer = context.sample("Say hi", max_tokens=10)
    roots = context.list_roots() if context.client_supports("roots") else []
    return {"said": answer["content"]["text"], "roots": len(roots)}
"""
ASKING_PROMPT = """
PROMPT_SPEC = {"name": "with_context", "description": "Asks the user for context first."}

def run(arguments, context):
    answer = context.elicit("What context?", {"type": "object", "properties": {"context": {"type": "string"}}},
                            key="user_context")
    return f"Context: {answer['content']['context']}"
"""


def folder(tmp_path: Path, **files: str) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    for name, text in files.items():
        (tools / f"{name}.py").write_text(text.lstrip())
    return tools


class Heard:
    """The notifications a session received, by method."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.updated: list[str] = []

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if isinstance(method, str):
            self.methods.append(method)
        if isinstance(root, types.ResourceUpdatedNotification):
            self.updated.append(str(root.params.uri))


@MODES
async def test_each_kind_is_listed_read_got_and_completed(tmp_path: Path, mode: str) -> None:
    tools = folder(tmp_path, picture=TOOL, today=RESOURCE, dot=BINARY, day=TEMPLATE, greet=PROMPT)
    async with serving(tools, tmp_path / "data") as server, Client(server, mode=mode) as client:
        picture = await client.call_tool("show_picture", {})
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
        today = await client.read_resource("notes://today")
        dot = await client.read_resource("notes://dot.png")
        day = await client.read_resource("notes://day/2026-03-01")
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        greeting = await client.get_prompt("greet", {"who": "민지", "lang": "ko"})
        dates = await client.complete(
            types.ResourceTemplateReference(uri="notes://day/{date}"), {"name": "date", "value": "2026"}
        )
        langs = await client.complete(types.PromptReference(name="greet"), {"name": "lang", "value": "K"})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("greet", {"lang": "en"})
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("notes://nothing")
    assert not picture.is_error and picture.structured_content is None
    assert [block.type for block in picture.content] == ["text", "image"]
    assert resources["notes://today"].title == "Today / 오늘" and resources["notes://today"].mime_type == "text/plain"
    assert "truloop://guide" in resources  # the built-in resources stay
    assert [t.uri_template for t in templates if t.name == "day"] == ["notes://day/{date}"]
    assert today.contents[0].text == "VERSION" and today.contents[0].mime_type == "text/plain"  # type: ignore[union-attr]
    assert dot.contents[0].blob == "iVBORw==" and str(dot.contents[0].uri) == "notes://dot.png"  # type: ignore[union-attr]
    assert day.contents[0].text == '{"date": "2026-03-01"}'  # type: ignore[union-attr]
    assert str(day.contents[0].uri) == "notes://day/2026-03-01"
    assert [a.name for a in prompts["greet"].arguments or []] == ["who", "lang"] and "plan_meeting" in prompts
    assert greeting.description == "Say hello to someone."
    assert greeting.messages[0].content.text == "안녕하세요, 민지!"  # type: ignore[union-attr]
    assert greeting.messages[1].role == "assistant"
    assert dates.completion.values == ["2026-03-01", "2026-03-02"] and langs.completion.values == ["ko"]
    assert missing.value.error.code == types.INVALID_PARAMS and "who" in missing.value.error.message
    assert unknown.value.error.code == types.INVALID_PARAMS


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")  # the handshake era's way, on purpose
async def test_hot_reload_tells_the_sessions_that_should_hear(tmp_path: Path) -> None:
    tools = folder(tmp_path, today=RESOURCE, greet=PROMPT)
    subscribed, lister, bystander = Heard(), Heard(), Heard()
    async with (
        serving(tools, tmp_path / "data") as server,
        Client(server, mode="legacy", message_handler=subscribed) as client,
        Client(server, mode="legacy", message_handler=lister) as listing,
        Client(server, mode="legacy", message_handler=bystander) as other,
    ):
        await client.subscribe_resource("notes://today")
        await listing.list_resources()
        await listing.list_prompts()
        await other.call_tool("get_current_datetime", {})

        write(tools / "today.py", RESOURCE.lstrip().replace("VERSION", "SECOND"))
        await eventually(lambda: "notes://today" in subscribed.updated)
        assert (await client.read_resource("notes://today")).contents[0].text == "SECOND"  # type: ignore[union-attr]

        await eventually(lambda: "notifications/resources/list_changed" in lister.methods)  # its title may have too
        lister.methods.clear()
        write(tools / "day.py", TEMPLATE.lstrip())
        await eventually(lambda: "notifications/resources/list_changed" in lister.methods)
        assert [t.name for t in (await listing.list_resource_templates()).resource_templates if t.name == "day"]
        (tools / "greet.py").unlink()
        await eventually(lambda: "notifications/prompts/list_changed" in lister.methods)
        assert "greet" not in {p.name for p in (await listing.list_prompts()).prompts}
        await other.call_tool("get_current_datetime", {})  # a round trip: anything sent before it has arrived
    assert "notes://today" not in lister.updated  # only the subscribed session hears of the update
    assert not [m for m in bystander.methods if m.startswith("notifications/resources") or "prompts" in m]


async def test_a_listen_stream_hears_of_plugin_prompts_and_resources(tmp_path: Path) -> None:
    tools = folder(tmp_path, today=RESOURCE)
    async with serving(tools, tmp_path / "data") as server, Client(server, mode="auto") as client:
        heard: list[str] = []
        async with client.listen(prompts_list_changed=True, resources_list_changed=True) as events:  # type: ignore[call-arg]

            async def collect() -> None:
                async for event in events:
                    heard.append(type(event).__name__)

            async with anyio.create_task_group() as tg:
                tg.start_soon(collect)
                write(tools / "greet.py", PROMPT.lstrip())
                await eventually(lambda: any("Prompt" in name for name in heard))
                (tools / "today.py").unlink()
                await eventually(lambda: any("Resource" in name for name in heard))
                tg.cancel_scope.cancel()


@MODES
async def test_a_plugin_reports_progress_logs_and_asks_the_user_in_both_eras(tmp_path: Path, mode: str) -> None:
    tools = folder(tmp_path, asking=ASKING)
    logs: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []
    asked: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with (
        serving(tools, tmp_path / "data") as server,
        Client(
            server,
            mode=mode,
            elicitation_callback=answering("accept", {"name": "Minji"}, asked),
            logging_callback=on_log,
            log_level="info" if mode == "auto" else None,
        ) as client,
    ):
        result = await client.call_tool("ask_and_tell", {}, progress_callback=on_progress)
    assert not result.is_error, result.content
    assert result.structured_content == {"action": "accept", "name": "Minji"}
    assert asked == ["What is your name?"]
    assert "asking the user" in [log if isinstance(log, str) else log.get("message") for log in logs]
    assert (1.0, 2.0, "half way") in progress
    runs = int((tmp_path / "data" / "plugins" / "ask_and_tell" / "runs").read_text())
    assert runs == (2 if mode == "auto" else 1)  # 2026-07-28: asked, then run again with the answer


@MODES
async def test_sampling_roots_and_a_missing_capability(tmp_path: Path, mode: str) -> None:
    tools = folder(tmp_path, sampling=SAMPLING)

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi!"),
                                         model="test")  # fmt: skip

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])  # type: ignore[arg-type]

    async with serving(tools, tmp_path / "data") as server:
        async with Client(server, mode=mode, sampling_callback=sample, list_roots_callback=roots) as client:
            answered = await client.call_tool("needs_sampling", {})
        async with Client(server, mode=mode) as client:
            if mode == "auto":
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("needs_sampling", {})
            else:
                unable = await client.call_tool("needs_sampling", {})
    assert answered.structured_content == {"said": "hi!", "roots": 1}, answered.content
    if mode == "auto":
        assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}
    else:
        assert unable.is_error and "sampling" in unable.content[0].text  # type: ignore[union-attr]


@MODES
async def test_a_prompt_asks_the_user_in_both_eras(tmp_path: Path, mode: str) -> None:
    tools = folder(tmp_path, with_context=ASKING_PROMPT)
    async with (
        serving(tools, tmp_path / "data") as server,
        Client(server, mode=mode, elicitation_callback=answering("accept", {"context": "회의"})) as client,
    ):
        got = await client.get_prompt("with_context", {})
    assert got.messages[0].content.text == "Context: 회의"  # type: ignore[union-attr]


async def test_an_invalid_spec_is_refused_and_reported(tmp_path: Path) -> None:
    tools = folder(
        tmp_path,
        truloop=RESOURCE.replace("notes://today", "truloop://inbox"),
        both=RESOURCE.replace('"uri": "notes://today"', '"uri": "a://b", "uri_template": "a://{x}"'),
        twice="TOOL_SPEC = {}\nPROMPT_SPEC = {}\ndef run(a, c):\n    return 1\n",
        builtin_prompt=PROMPT.replace('"greet"', '"plan_meeting"'),
        today=RESOURCE,
        again=RESOURCE,
    )
    async with serving(tools, tmp_path / "data") as server:
        plugins = server.deployment.plugins
        assert plugins is not None
        errors = {error.path.name: error.message for error in plugins.errors()}
        async with Client(server, mode="legacy") as client:
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
    assert "server's own" in errors["truloop.py"]
    assert "exactly one of uri" in errors["both.py"]
    assert "TOOL_SPEC and PROMPT_SPEC" in errors["twice.py"]
    assert "built-in prompt" in errors["builtin_prompt.py"]
    assert "notes://today" in errors["today.py"] and "again.py" in errors["today.py"]  # the first file keeps it
    assert uris.count("notes://today") == 1


@pytest.mark.parametrize("isolation", ["process", "sandbox"])
async def test_every_kind_and_the_client_work_in_a_worker_process(tmp_path: Path, isolation: str) -> None:
    tools = folder(tmp_path, asking=ASKING, dot=BINARY, greet=PROMPT)
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with (
        serving(tools, tmp_path / "data", plugin_isolation=isolation) as server,
        Client(
            server, mode="legacy", elicitation_callback=answering("accept", {"name": "서연"}), logging_callback=on_log
        ) as client,  # fmt: skip
    ):
        result = await client.call_tool("ask_and_tell", {})
        dot = await client.read_resource("notes://dot.png")
        greeting = await client.get_prompt("greet", {"who": "Bob"})
    assert result.structured_content == {"action": "accept", "name": "서연"}, result.content
    assert "asking the user" in [log if isinstance(log, str) else log.get("message") for log in logs]
    assert dot.contents[0].blob == "iVBORw=="  # type: ignore[union-attr]
    assert greeting.messages[0].content.text == "Hello, Bob!"  # type: ignore[union-attr]


ASYNC_ASKING = """
TOOL_SPEC = {"name": "ask_async", "description": "Asks from async code.", "asks_client": True,
             "input_schema": {"type": "object", "properties": {}}}

async def run(input_data, context):
    answer = await context.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    roots = await context.list_roots()
    both = await context.ask({"n": {"method": "roots/list", "params": {}}})
    return {"name": answer["content"]["name"], "roots": len(roots), "keys": sorted(both)}
"""


@MODES
async def test_async_code_awaits_the_clients_answers(tmp_path: Path, mode: str) -> None:
    tools = folder(tmp_path, ask_async=ASYNC_ASKING)

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])  # type: ignore[arg-type]

    async with (
        serving(tools, tmp_path / "data") as server,
        Client(
            server, mode=mode, elicitation_callback=answering("accept", {"name": "지우"}), list_roots_callback=roots
        ) as client,  # fmt: skip
    ):
        result = await client.call_tool("ask_async", {})
    assert result.structured_content == {"name": "지우", "roots": 1, "keys": ["n"]}, result.content
