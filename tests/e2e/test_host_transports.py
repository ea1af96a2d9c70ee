"""Resources, prompts, completion and logging through real transports: a `truloop-mcp` stdio subprocess (its docs
folder watched while a document is subscribed to) and `truloop-mcp --transport http` on 127.0.0.1 with two users'
tokens (neither ever lists or reads the other's inbox)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.support import SECRET, TRULOOP, child_env, mcp_client, paths_env, spawn_http_server, token

pytestmark = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed", "ignore:The logging capability")
HANDBOOK = "truloop://docs/handbook.md"


class Heard:
    def __init__(self) -> None:
        self.updated: list[str] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.event = anyio.Event()

    async def message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            self.updated.append(str(root.params.uri))
            self.event.set()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


def docs_folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("# Handbook\n\nLaptops come from IT.\n", encoding="utf-8")
    return docs


@pytest.mark.anyio
@pytest.mark.parametrize("fast_paths", [True, False], ids=["fast", "plain"])
async def test_stdio_subprocess_serves_everything_and_watches_subscribed_documents(
    tmp_path: Path, fast_paths: bool
) -> None:
    docs = docs_folder(tmp_path)
    args = ["--data-dir", str(tmp_path / "data"), "--docs", str(docs), "--user", "alice", "--page-size", "3"]
    params = StdioServerParameters(command=TRULOOP, args=args, env=paths_env(fast_paths))
    heard = Heard()
    async with Client(params, mode="legacy", message_handler=heard.message, logging_callback=heard.log) as client:
        resources = await client.list_resources()
        guide = await client.read_resource("truloop://guide")
        prompts = await client.list_prompts()
        meeting = await client.get_prompt("find_in_docs", {"question": "laptops"})
        completed = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="truloop://docs/{path}"),
            {"name": "path", "value": "hand"},
        )
        tools = await client.list_tools()
        with pytest.raises(MCPError) as bogus:
            await client.list_tools(cursor="no-such-cursor", cache_mode="refresh")
        await client.set_logging_level("warning")
        await client.call_tool("get_day_of_week", {"date": "someday"})
        await client.call_tool("search_knowledge_base", {"query": "laptops"})  # the first index
        await client.subscribe_resource(HANDBOOK)
        (docs / "handbook.md").write_text("# Handbook\n\nLaptops and monitors come from IT.\n", encoding="utf-8")
        with anyio.fail_after(30):  # nobody searches: the watcher (every few seconds) notices
            await heard.event.wait()
    assert [r.uri for r in resources.resources][:2] == ["truloop://guide", "truloop://inbox"]
    assert len(resources.resources) == 3 and resources.next_cursor is not None
    assert "truloop" in guide.contents[0].text  # type: ignore[union-attr]
    assert len(prompts.prompts) == 3 and prompts.next_cursor is not None
    assert "search_knowledge_base" in meeting.messages[0].content.text  # type: ignore[union-attr]
    assert completed.completion.values == ["handbook.md"]
    assert len(tools.tools) == 3 and tools.next_cursor is not None
    assert bogus.value.error.code == types.INVALID_PARAMS
    assert [(m.level, m.data["code"]) for m in heard.logs] == [("warning", "validation")]
    assert heard.updated == [HANDBOOK]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Any:
    docs = docs_folder(tmp_path_factory.mktemp("http-docs"))
    with spawn_http_server("--docs", str(docs), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        yield base


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_over_http_each_user_sees_only_their_own_inbox(secured: str, mode: str) -> None:
    alice_token, bob_token = token("alice"), token("bob")
    heard = Heard()
    async with mcp_client(secured, alice_token, "legacy", message_handler=heard.message) as alice_session:
        await alice_session.call_tool("get_day_of_week", {"date": "2026-03-10"})  # alice enters the directory
        await alice_session.subscribe_resource("truloop://inbox")
        async with mcp_client(secured, bob_token, mode) as bob:
            sent = await bob.call_tool("send_message_to_user", {"recipient": "alice", "message": f"hi from {mode}"})
            assert not sent.is_error, sent.content
            bob_listed = {r.uri for r in (await bob.list_resources()).resources}
            bob_inbox = json.loads((await bob.read_resource("truloop://inbox")).contents[0].text)  # type: ignore[union-attr]
            with pytest.raises(MCPError) as refused:
                await bob.read_resource("truloop://inbox/alice")
        with anyio.fail_after(10):
            await heard.event.wait()
    async with mcp_client(secured, alice_token, mode) as alice:
        alice_inbox = json.loads((await alice.read_resource("truloop://inbox")).contents[0].text)  # type: ignore[union-attr]
    assert "truloop://inbox" in bob_listed and not any("alice" in uri for uri in bob_listed)
    assert all(m["sender_id"] != "bob" for m in bob_inbox["messages"])  # bob's inbox never holds what he sent
    assert refused.value.error.code == types.INVALID_PARAMS
    assert f"hi from {mode}" in json.dumps(alice_inbox, ensure_ascii=False)
    assert heard.updated == ["truloop://inbox"]


@pytest.mark.anyio
async def test_over_http_a_guest_lists_no_inbox_and_no_documents(secured: str) -> None:
    async with mcp_client(secured, token("gwen", role="guest")) as guest:
        listed = {r.uri for r in (await guest.list_resources()).resources}
        prompts = {p.name for p in (await guest.list_prompts()).prompts}
    assert listed == {"truloop://guide", "truloop://events"}
    assert prompts == {"prepare_for_event"}
