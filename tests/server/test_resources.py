"""Resources over the real MCP front, in both protocol eras: listed, read and paged per caller, never another
user's inbox, a guest only their invitations; the capabilities each era advertises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from server.mcp.mcp_server import TruloopMCP
from tests.host_views_data import Store, host_store
from tests.support import FAST_AND_PLAIN, MODES, server_for


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await host_store(tmp_path)


def member(store: Store, *, page_size: int = 500, fast_paths: bool = True, user: str = "alice") -> TruloopMCP:
    return server_for("member", services=store.services, user=user, page_size=page_size, fast_paths=fast_paths)


async def every_resource(client: Client) -> list[types.Resource]:
    found: list[types.Resource] = []
    cursor = None
    for _ in range(50):
        page = await client.list_resources(cursor=cursor)
        found += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return found
    raise AssertionError("the pages never ended")


async def refused(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    assert caught.value.error.code == types.INVALID_PARAMS, caught.value.error
    return caught.value


@pytest.mark.anyio
@MODES
async def test_a_member_lists_reads_and_pages_their_own_resources(store: Store, mode: str) -> None:
    async with Client(member(store, page_size=2), mode=mode) as client:
        first = await client.list_resources()
        assert len(first.resources) == 2 and first.next_cursor is not None
        listed = {resource.uri: resource for resource in await every_resource(client)}
        first_templates = await client.list_resource_templates()  # pages of 2
        assert first_templates.next_cursor is not None
        rest = await client.list_resource_templates(cursor=first_templates.next_cursor)
        templates = {t.uri_template for t in [*first_templates.resource_templates, *rest.resource_templates]}
        inbox = json.loads((await client.read_resource("truloop://inbox")).contents[0].text)  # type: ignore[union-attr]
        events = json.loads((await client.read_resource("truloop://events")).contents[0].text)  # type: ignore[union-attr]
        handbook = (await client.read_resource("truloop://docs/Team%20Handbook.md")).contents[0]
        notes = (await client.read_resource("truloop://docs/notes.txt")).contents[0]
        one = (await client.read_resource(f"truloop://events/{store.alice_event}")).contents[0]
        guide = (await client.read_resource("truloop://guide")).contents[0]
        still_unread = (await client.call_tool("get_inbox", {})).structured_content
        await refused(client.read_resource(f"truloop://events/{store.bob_event}"))  # bob's, alice is not invited
        await refused(client.read_resource("truloop://docs/../store.db"))
        await refused(client.read_resource("truloop://docs/missing.md"))
        await refused(client.read_resource("truloop://nothing"))

    assert {"truloop://guide", "truloop://inbox", "truloop://events", f"truloop://events/{store.alice_event}"} <= set(
        listed
    )
    assert {"truloop://docs/Team%20Handbook.md", "truloop://docs/policies/expenses.md"} <= set(listed)
    assert f"truloop://events/{store.bob_event}" not in listed
    assert listed["truloop://docs/Team%20Handbook.md"].mime_type == "text/markdown"
    assert templates == {"truloop://docs/{path}", "truloop://events/{event_id}", "truloop://schedules/{schedule_id}"}
    assert [m["text"] for m in inbox["messages"]] == ["Message from Bob Lee: lunch?"]  # never bob's inbox
    assert [e["title"] for e in events["events"]] == ["Design review"]
    assert handbook.mime_type == "text/markdown" and "Laptop setup" in handbook.text  # type: ignore[union-attr]
    assert notes.mime_type == "text/plain"
    assert one.mime_type == "application/json" and json.loads(one.text)["title"] == "Design review"  # type: ignore[union-attr]
    assert "search_knowledge_base" in guide.text and "도구" in guide.text  # type: ignore[union-attr]
    assert still_unread is not None and len(still_unread["messages"]) == 1  # reading the resource marked nothing


@pytest.mark.anyio
@MODES
async def test_a_guest_sees_only_the_events_they_are_invited_to(store: Store, mode: str) -> None:
    async with Client(server_for("guest", services=store.services, user="gus"), mode=mode) as client:
        listed = {resource.uri for resource in await every_resource(client)}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        events = json.loads((await client.read_resource("truloop://events")).contents[0].text)  # type: ignore[union-attr]
        await refused(client.read_resource("truloop://inbox"))
        await refused(client.read_resource("truloop://docs/Team%20Handbook.md"))
        await refused(client.read_resource(f"truloop://events/{store.bob_event}"))
        invited = await client.read_resource(f"truloop://events/{store.gus_event}")
    assert listed == {
        "truloop://guide", "truloop://events", f"truloop://events/{store.alice_event}",
        f"truloop://events/{store.gus_event}",
    }  # fmt: skip
    assert templates == {"truloop://events/{event_id}"}
    assert {e["title"] for e in events["events"]} == {"Design review", "Guest lunch"}
    assert json.loads(invited.contents[0].text)["your_role"] == "invitee"  # type: ignore[union-attr]


@pytest.mark.anyio
@MODES
async def test_the_notification_safe_profile_has_docs_but_no_inbox_or_events(store: Store, mode: str) -> None:
    async with Client(server_for("notification-safe", services=store.services, user="alice"), mode=mode) as client:
        listed = {resource.uri for resource in await every_resource(client)}
        await refused(client.read_resource("truloop://inbox"))
    assert "truloop://guide" in listed and "truloop://docs/notes.txt" in listed
    assert not {"truloop://inbox", "truloop://events"} & listed


@pytest.mark.anyio
@MODES
@FAST_AND_PLAIN
async def test_every_list_is_paged_and_a_bogus_cursor_is_refused(store: Store, mode: str, fast_paths: bool) -> None:
    async with Client(member(store, page_size=3, fast_paths=fast_paths), mode=mode) as client:
        tools: list[str] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            assert len(page.tools) <= 3
            tools += [tool.name for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        prompts = await client.list_prompts()
        more = await client.list_prompts(cursor=prompts.next_cursor)
        for bogus in ("bogus", "cDE6cHJvbXB0czoy", "", "cDE6dG9vbHM6LTE"):  # garbage, another list's, empty, negative
            await refused(client.list_tools(cursor=bogus, cache_mode="refresh"))
        await refused(client.list_resources(cursor="not-a-cursor"))
        await refused(client.list_prompts(cursor="cDE6dG9vbHM6Mw"))  # a tools cursor
    async with Client(member(store, fast_paths=fast_paths), mode=mode) as client:
        whole = [tool.name for tool in (await client.list_tools()).tools]
    assert tools == whole and len(whole) > 3
    assert len(prompts.prompts) == 3 and prompts.next_cursor is not None
    assert more.next_cursor is None and len(more.prompts) == 2


@pytest.mark.anyio
@MODES
async def test_capabilities_say_what_works_in_each_era(store: Store, mode: str) -> None:
    async with Client(member(store), mode=mode) as client:
        caps = client.server_capabilities
    assert caps.resources is not None and caps.resources.subscribe is True  # resources/subscribe or listen
    assert caps.prompts is not None and caps.completions is not None and caps.tools is not None
    if mode == "legacy":
        assert caps.logging is not None
    # handshake sessions that listed resources hear when plugin files change the list; listen streams, of documents too
    assert caps.resources.list_changed is True and caps.prompts.list_changed is True


@pytest.mark.anyio
@MODES
async def test_a_nul_in_a_uri_is_invalid_params_naming_it(store: Store, mode: str) -> None:
    async with Client(member(store), mode=mode) as client:
        for uri in ("truloop://docs/a%00b.md", "truloop://docs/a\x00b.md", "truloop://events/x%00"):
            error = await refused(client.read_resource(uri))
            assert "NUL" in error.error.message
