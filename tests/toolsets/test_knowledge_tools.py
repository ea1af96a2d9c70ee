"""search_knowledge_base through the MCP client in both eras, the incremental index, and the Notion sync
(Notion's API mocked by httpx.MockTransport with bodies shaped like its 2022-06-28 responses)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from pydantic import SecretStr

from tests.support import MODES, error_of, no_wait, server_for, services_for
from toolsets.infra.store.knowledge import MAX_CHUNK_CHARS, parse_document
from toolsets.infra.upstream import notion
from toolsets.infra.upstream.notion import NotionSyncError, sync_notion
from toolsets.services import Services

HANDBOOK_ID = "3f2a1b0c9d8e7f6a5b4c3d2e1f0a9be9"
ONBOARDING_ID = "0123456789abcdef0123456789abcdef"

HANDBOOK = """# Team Handbook

Welcome to the team. This handbook covers how we work.

## Onboarding

Your first week is about meeting people.

### Laptop setup

Pick up your laptop from IT on day one. Laptop setup: install the VPN client, turn on disk
encryption and enrol the laptop in device management before you sign in to anything.

```
# this line is code, not a heading
```

## Expenses

Submit receipts within 30 days through the finance portal.
"""

TRAVEL = """# Travel policy

Book flights through the travel desk. You may bring a laptop bag as cabin luggage; the travel desk
does not handle equipment setup questions.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def svc(data_dir: Path, store_backend: str) -> Services:
    """Services on each backend in turn (SQLite, then PostgreSQL): every test using it runs on both."""
    services = services_for(data_dir)
    services.knowledge.debounce = 0  # every search rescans: the tests change files between calls
    return services


@pytest.fixture
def docs(svc: Services) -> Path:
    write(svc.docs_dir / f"Team Handbook {HANDBOOK_ID}.md", HANDBOOK)
    write(svc.docs_dir / "policies" / "travel.md", TRAVEL)
    write(svc.docs_dir / "notes.txt", "Plain notes: the office wifi password is on the fridge.\n")
    return svc.docs_dir


async def search(client: Client, query: str, **extra: Any) -> dict[str, Any]:
    result = await client.call_tool("search_knowledge_base", {"query": query, **extra})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


# -- search through MCP -----------------------------------------------------------------------


@pytest.mark.anyio
@MODES
async def test_bm25_ranks_the_most_relevant_section_first_with_heading_path_and_snippet(
    mode: str, svc: Services, docs: Path
) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        found = await search(client, "laptop setup")
    hits = found["hits"]
    assert found["documents_indexed"] == 3
    assert hits[0]["heading"] == "Team Handbook > Onboarding > Laptop setup"
    assert hits[0]["title"] == "Team Handbook"
    assert hits[0]["source"] == f"Team Handbook {HANDBOOK_ID}.md"
    assert "**laptop**" in hits[0]["snippet"].lower() and "VPN client" in hits[0]["snippet"]
    assert [hit["source"] for hit in hits].index("policies/travel.md") > 0  # a passing mention ranks lower
    assert hits[0]["score"] > hits[-1]["score"]
    assert all(hit["source"] != "notes.txt" for hit in hits)


@pytest.mark.anyio
@MODES
async def test_a_title_match_outranks_a_body_mention(mode: str, svc: Services, docs: Path) -> None:
    write(docs / "VPN access.md", "# VPN access\n\nAsk IT for credentials.\n")
    async with Client(server_for(services=svc), mode=mode) as client:
        hits = (await search(client, "vpn"))["hits"]
    assert [hit["title"] for hit in hits] == ["VPN access", "Team Handbook"]


@pytest.mark.anyio
@MODES
async def test_notion_export_names_give_the_title_without_id_and_keep_the_page_id(
    mode: str, svc: Services, docs: Path
) -> None:
    page = docs / f"Team Handbook {HANDBOOK_ID}" / f"Onboarding checklist {ONBOARDING_ID}.md"
    write(page, "Return the signed NDA to people ops before Friday.\n")
    async with Client(server_for(services=svc), mode=mode) as client:
        hits = (await search(client, "signed NDA", limit=1))["hits"]
        handbook = (await search(client, "receipts finance portal", limit=1))["hits"][0]
    assert len(hits) == 1
    assert hits[0]["title"] == "Onboarding checklist"
    assert hits[0]["page_id"] == ONBOARDING_ID
    assert hits[0]["source"] == f"Team Handbook {HANDBOOK_ID}/Onboarding checklist {ONBOARDING_ID}.md"
    assert handbook["page_id"] == HANDBOOK_ID and handbook["heading"] == "Team Handbook > Expenses"


@pytest.mark.anyio
@MODES
async def test_the_index_follows_edits_and_deletions(mode: str, svc: Services, docs: Path) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        assert (await search(client, "wifi password"))["hits"]
        write(docs / "notes.txt", "Plain notes: the guest network is called zebra-lounge now.\n")
        (docs / "policies" / "travel.md").unlink()
        assert [hit["source"] for hit in (await search(client, "zebra"))["hits"]] == ["notes.txt"]
        assert (await search(client, "wifi password"))["hits"] == []
        gone = await search(client, "flights travel desk")
    assert gone["hits"] == [] and gone["documents_indexed"] == 2


@pytest.mark.anyio
async def test_only_changed_files_are_rechunked(svc: Services, docs: Path) -> None:
    first = await svc.knowledge.refresh()
    assert (first.files_seen, first.files_indexed, first.files_unchanged) == (3, 3, 0)
    assert first.chunks_written == 6

    again = await svc.knowledge.refresh()
    assert (again.files_indexed, again.files_unchanged, again.chunks_written) == (0, 3, 0)

    write(docs / "notes.txt", "Different notes, longer than before: lunch is at noon.\n")
    os.utime(docs / "policies" / "travel.md", ns=(1_000_000_000, 1_000_000_000))  # new mtime, same bytes
    write(docs / "new.md", "# New\n\nA brand new page.\n")
    (docs / f"Team Handbook {HANDBOOK_ID}.md").unlink()
    changed = await svc.knowledge.refresh()
    assert changed.files_indexed == 2  # notes.txt and new.md
    assert changed.files_touched == 1  # travel.md: hashed, found equal, not re-chunked
    assert changed.files_removed == 1
    assert changed.chunks_written == 2
    assert (await svc.knowledge.refresh()).files_unchanged == 3


@pytest.mark.anyio
@MODES
async def test_the_first_search_indexes_and_reports_progress(mode: str, svc: Services) -> None:
    for n in range(70):  # more than one indexing batch
        write(svc.docs_dir / f"page-{n:02}.md", f"# Page {n}\n\nItem number {n} of the inventory.\n")
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(server_for(services=svc), mode=mode) as client:
        result = await client.call_tool(
            "search_knowledge_base", {"query": "inventory item 7"}, progress_callback=on_progress
        )
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["hits"][0]["title"] == "Page 7"
        count_after_first = len(seen)
        await client.call_tool("search_knowledge_base", {"query": "inventory"}, progress_callback=on_progress)
    assert count_after_first >= 2
    assert seen[0][:2] == (0, 70) and seen[count_after_first - 1][:2] == (70, 70)
    assert all(message for _, _, message in seen)
    assert len(seen) == count_after_first  # nothing changed: the second search indexed nothing


@pytest.mark.anyio
@MODES
async def test_a_missing_docs_folder_says_how_to_configure_one(mode: str, data_dir: Path) -> None:
    svc = services_for(data_dir)
    async with Client(server_for(services=svc), mode=mode) as client:
        result = await client.call_tool("search_knowledge_base", {"query": "anything"})
    assert error_of(result)["code"] == "not_configured"
    reason = error_of(result)["reason"]
    assert str(svc.docs_dir) in reason and "--docs" in reason and "TRULOOP_DOCS_DIR" in reason


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    "query", ['laptop" OR "*', "laptop AND (NOT", "NEAR(laptop setup, 2)", "title:laptop ^setup", "laptop* -setup"]
)
async def test_fts_syntax_in_a_query_is_searched_as_words(mode: str, svc: Services, docs: Path, query: str) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        hits = (await search(client, query))["hits"]
    assert hits[0]["heading"] == "Team Handbook > Onboarding > Laptop setup"


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("arguments", [{"query": '"*^:()'}, {"query": "   "}, {"query": "x", "limit": 21}])
async def test_a_query_without_words_or_a_bad_limit_is_a_validation_error(
    mode: str, svc: Services, docs: Path, arguments: dict[str, Any]
) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        result = await client.call_tool("search_knowledge_base", arguments)
    assert error_of(result)["code"] == "validation"


@pytest.mark.anyio
async def test_symlinks_leaving_the_docs_folder_are_not_indexed(svc: Services, docs: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "outside" / "secret.md", "# Secret\n\nThe launch codes are pineapple.\n")
    (docs / "leak.md").symlink_to(secret)
    (docs / "leakdir").symlink_to(secret.parent, target_is_directory=True)
    (docs / "alias.md").symlink_to(docs / "notes.txt")  # stays inside: fine
    async with Client(server_for(services=svc)) as client:
        assert (await search(client, "pineapple"))["hits"] == []
        sources = {hit["source"] for hit in (await search(client, "fridge"))["hits"]}
    assert sources == {"notes.txt", "alias.md"}


@pytest.mark.anyio
async def test_concurrent_first_searches_index_once(svc: Services, docs: Path) -> None:
    results: list[int] = []

    async def one() -> None:
        results.append(len(await svc.knowledge.search("laptop", 5)))

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(one)
    assert results == [2] * 5
    assert await svc.knowledge.document_count() == 3
    assert await svc.knowledge.chunk_count() == 6  # indexed once, not once per caller
    assert (await svc.knowledge.refresh()).files_indexed == 0


@pytest.mark.anyio
async def test_the_tool_is_read_only_idempotent_and_closed_world(svc: Services) -> None:
    async with Client(server_for(services=svc)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    hints = tools["search_knowledge_base"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.idempotent_hint, hints.open_world_hint) == (True, True, False)


def test_long_sections_are_split_into_bounded_chunks_under_the_same_heading() -> None:
    paragraph = "Shipping rules apply to every parcel we send overseas. " * 12
    text = "# Logistics\n\n## Shipping\n\n" + "\n\n".join([paragraph] * 6) + "\n\n## Returns\n\nWithin 14 days.\n"
    title, page_id, chunks = parse_document("ops/Logistics.md", text)
    assert (title, page_id) == ("Logistics", None)
    shipping = [chunk for chunk in chunks if chunk.heading == "Logistics > Shipping"]
    assert len(shipping) >= 3 and all(len(chunk.body) <= MAX_CHUNK_CHARS for chunk in shipping)
    assert sum(chunk.body.count("parcel") for chunk in shipping) == 72  # nothing lost in the split
    assert chunks[-1].heading == "Logistics > Returns" and chunks[-1].body == "Within 14 days."


# -- Notion sync ------------------------------------------------------------------------------

TOKEN = "ntn_test_secret_value_123"
PAGE_A = "59833787-2cf9-4fdf-8782-e53db20768a5"
PAGE_B = "a1b2c3d4-0000-4fdf-8782-e53db2076800"
PAGE_GONE = "ffffffff-2cf9-4fdf-8782-e53db20768a5"
LIST_PARENT = "b0000000-0000-4000-8000-000000000001"


def rich(text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "text",
            "text": {"content": text, "link": None},
            "annotations": {"bold": False, "italic": False, "strikethrough": False, "underline": False},
            "plain_text": text,
            "href": None,
        }
    ]


def page(page_id: str, title: str, *, archived: bool = False) -> dict[str, Any]:
    return {
        "object": "page",
        "id": page_id,
        "created_time": "2026-01-05T09:00:00.000Z",
        "last_edited_time": "2026-03-01T10:30:00.000Z",
        "archived": archived,
        "in_trash": archived,
        "parent": {"type": "workspace", "workspace": True},
        "properties": {"title": {"id": "title", "type": "title", "title": rich(title)}},
        "url": f"https://www.notion.so/{page_id.replace('-', '')}",
    }


def block(
    kind: str, text: str | None = None, *, block_id: str = "", has_children: bool = False, **extra: Any
) -> dict[str, Any]:
    value: dict[str, Any] = {"color": "default", **extra}
    if text is not None:
        value["rich_text"] = rich(text)
    return {
        "object": "block",
        "id": block_id or f"blk-{kind}-{abs(hash(text)) % 10_000}",
        "type": kind,
        "has_children": has_children,
        "archived": False,
        kind: value,
    }


def listing(results: list[dict[str, Any]], next_cursor: str | None, kind: str) -> dict[str, Any]:
    return {
        "object": "list",
        "results": results,
        "next_cursor": next_cursor,
        "has_more": next_cursor is not None,
        "type": kind,
        kind: {},
    }


def notion_error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"object": "error", "status": status, "code": code, "message": message}


class FakeNotion:
    """Serves /v1/search and /v1/blocks/{id}/children with pagination; records requests."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.title_a = "Engineering Handbook"
        self.include_gone = True
        self.rate_limit_first_search = True
        self.fail: Callable[[httpx.Request], httpx.Response | None] = lambda request: None

    def blocks(self, block_id: str, cursor: str | None) -> dict[str, Any]:
        if block_id == PAGE_A.replace("-", "") and cursor is None:
            return listing(
                [
                    block("paragraph", "How we build and ship software."),
                    block("heading_1", "Code review"),
                    block("paragraph", "Every change needs one approving review."),
                    block("bulleted_list_item", "Keep pull requests small", block_id=LIST_PARENT, has_children=True),
                    block("bulleted_list_item", "Reply within a day"),
                    block("paragraph", ""),
                ],
                "cursor-blocks-2",
                "block",
            )
        if block_id == PAGE_A.replace("-", ""):
            assert cursor == "cursor-blocks-2"
            return listing(
                [
                    block("heading_2", "Deploys"),
                    block("numbered_list_item", "Merge to main"),
                    block("numbered_list_item", "Watch the canary dashboard"),
                    block("to_do", "Announce in #releases", checked=True),
                    block("to_do", "Update the changelog", checked=False),
                    block("code", "make deploy ENV=prod", language="shell", caption=[]),
                    block("quote", "Friday deploys need a second pair of eyes."),
                    block("callout", "Rollbacks are always allowed.", icon={"type": "emoji", "emoji": "💡"}),
                    block("divider"),
                    block("image", None, type="external", external={"url": "https://example.com/x.png"}),
                    block("child_page", None, title="Sub page"),
                ],
                None,
                "block",
            )
        if block_id == LIST_PARENT:
            return listing([block("bulleted_list_item", "Under 400 lines")], None, "block")
        if block_id == PAGE_B.replace("-", ""):
            return listing([block("paragraph", "Ask the on-call engineer in #support-escalations.")], None, "block")
        raise AssertionError(f"unexpected block id {block_id}")

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        failure = self.fail(request)
        if failure is not None:
            return failure
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.headers["Notion-Version"] == "2022-06-28"
        if request.method == "POST" and request.url.path == "/v1/search":
            if self.rate_limit_first_search:
                self.rate_limit_first_search = False
                return httpx.Response(
                    429,
                    headers={"Retry-After": "0"},
                    json=notion_error(429, "rate_limited", "You have been rate limited. Please try again later."),
                )
            body = json.loads(request.content)
            assert body["filter"] == {"property": "object", "value": "page"}
            if "start_cursor" not in body:
                first = [page(PAGE_A, self.title_a), page(PAGE_GONE, "Old archive", archived=True)]
                return httpx.Response(200, json=listing(first, "cursor-search-2", "page_or_database"))
            assert body["start_cursor"] == "cursor-search-2"
            second = [page(PAGE_B, "Support: escalations / on-call")] if self.include_gone else []
            return httpx.Response(200, json=listing(second, None, "page_or_database"))
        prefix = "/v1/blocks/"
        if request.method == "GET" and request.url.path.startswith(prefix) and request.url.path.endswith("/children"):
            block_id = request.url.path[len(prefix) : -len("/children")]
            assert request.url.params["page_size"] == "100"
            return httpx.Response(200, json=self.blocks(block_id, request.url.params.get("start_cursor")))
        return httpx.Response(404, json=notion_error(404, "object_not_found", "Not found."))


EXPECTED_A = """# Engineering Handbook

How we build and ship software.

## Code review

Every change needs one approving review.

- Keep pull requests small
  - Under 400 lines
- Reply within a day

### Deploys

1. Merge to main
1. Watch the canary dashboard
- [x] Announce in #releases
- [ ] Update the changelog

```shell
make deploy ENV=prod
```

> Friday deploys need a second pair of eyes.

> 💡 Rollbacks are always allowed.

---
"""


@pytest.fixture
def fake() -> FakeNotion:
    return FakeNotion()


@pytest.fixture
def notion_svc(data_dir: Path, fake: FakeNotion) -> Services:
    services = services_for(data_dir, transport=httpx.MockTransport(fake.handler))
    services.knowledge.debounce = 0
    return services


async def sync(
    services: Services, token: str | None = TOKEN, report: Callable[[str], None] | None = None
) -> notion.NotionSyncStats:
    """What `truloop-mcp notion sync` runs, with the fake Notion for the network and no backoff waits."""
    return await sync_notion(
        services.docs_dir,
        token=SecretStr(token) if token is not None else None,
        transport=services.http_transport,
        sleep=no_wait,
        report=report,
    )


@pytest.mark.anyio
async def test_notion_sync_writes_pages_as_markdown_named_like_an_export(
    notion_svc: Services, fake: FakeNotion
) -> None:
    said: list[str] = []
    stats = await sync(notion_svc, report=said.append)
    folder = notion_svc.docs_dir / "notion"
    a = folder / f"Engineering Handbook {PAGE_A.replace('-', '')}.md"
    b = folder / f"Support escalations on-call {PAGE_B.replace('-', '')}.md"
    assert sorted(path.name for path in folder.iterdir()) == sorted([a.name, b.name])
    assert a.read_text(encoding="utf-8") == EXPECTED_A
    assert b.read_text(encoding="utf-8") == (
        "# Support: escalations / on-call\n\nAsk the on-call engineer in #support-escalations.\n"
    )
    assert (stats.pages_found, stats.pages_written, stats.pages_skipped) == (3, 2, 1)
    searches = [request for request in fake.requests if request.url.path == "/v1/search"]
    assert len(searches) == 3  # 429, then two result pages
    assert stats.requests == len(fake.requests) == 3 + 2 + 1 + 1  # + page A's two block pages, its list, page B
    assert any("wrote notion/" in line for line in said)
    assert all(TOKEN not in line for line in said)


@pytest.mark.anyio
@MODES
async def test_synced_pages_are_searchable_and_unchanged_pages_are_not_rewritten(
    mode: str, notion_svc: Services, fake: FakeNotion
) -> None:
    await sync(notion_svc)
    async with Client(server_for(services=notion_svc), mode=mode) as client:
        hit = (await search(client, "canary dashboard", limit=1))["hits"][0]
    assert hit["title"] == "Engineering Handbook"
    assert hit["page_id"] == PAGE_A.replace("-", "")
    assert hit["heading"] == "Engineering Handbook > Code review > Deploys"
    assert hit["source"].startswith("notion/Engineering Handbook ")

    written = notion_svc.docs_dir / "notion" / f"Engineering Handbook {PAGE_A.replace('-', '')}.md"
    before = written.stat().st_mtime_ns
    again = await sync(notion_svc)
    assert (again.pages_written, again.pages_unchanged) == (0, 2)
    assert written.stat().st_mtime_ns == before
    assert (await notion_svc.knowledge.refresh()).files_indexed == 0


@pytest.mark.anyio
async def test_renamed_and_unshared_pages_replace_and_remove_their_files(
    notion_svc: Services, fake: FakeNotion
) -> None:
    await sync(notion_svc)
    fake.title_a = "Eng Handbook v2"
    fake.include_gone = False
    stats = await sync(notion_svc)
    names = sorted(path.name for path in (notion_svc.docs_dir / "notion").iterdir())
    assert names == [f"Eng Handbook v2 {PAGE_A.replace('-', '')}.md"]
    assert (stats.pages_written, stats.files_removed) == (1, 1)


@pytest.mark.anyio
async def test_notion_401_names_notion_token_without_leaking_it(notion_svc: Services, fake: FakeNotion) -> None:
    fake.fail = lambda request: httpx.Response(401, json=notion_error(401, "unauthorized", "API token is invalid."))
    with pytest.raises(NotionSyncError) as raised:
        await sync(notion_svc)
    assert raised.value.code == "upstream_auth" and not raised.value.retryable  # the code all upstreams share
    assert "NOTION_TOKEN" in raised.value.message and TOKEN not in raised.value.message
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_notion_without_a_token_says_which_variable_to_set(notion_svc: Services, fake: FakeNotion) -> None:
    for token in ("  ", None):
        with pytest.raises(NotionSyncError, match="NOTION_TOKEN") as raised:
            await sync(notion_svc, token=token)
        assert raised.value.code == "not_configured"
    assert fake.requests == []


@pytest.mark.anyio
async def test_notion_5xx_is_retried_then_fails_as_retryable(notion_svc: Services, fake: FakeNotion) -> None:
    fake.rate_limit_first_search = False
    failures = iter([503])

    def flaky(request: httpx.Request) -> httpx.Response | None:
        status = next(failures, None)
        return None if status is None else httpx.Response(status, json=notion_error(status, "service_unavailable", ""))

    fake.fail = flaky
    assert (await sync(notion_svc)).pages_written == 2  # one 503, then fine

    fake.requests.clear()
    fake.fail = lambda request: httpx.Response(502, json=notion_error(502, "internal_server_error", "Bad gateway"))
    with pytest.raises(NotionSyncError) as raised:
        await sync(notion_svc)
    assert raised.value.retryable and raised.value.code == "upstream_unavailable"
    assert "again later" in raised.value.message
    assert len(fake.requests) == notion.RETRY.attempts


@pytest.mark.anyio
async def test_notion_rate_limiting_is_bounded(notion_svc: Services, fake: FakeNotion) -> None:
    fake.fail = lambda request: httpx.Response(
        429, headers={"Retry-After": "0"}, json=notion_error(429, "rate_limited", "Slow down.")
    )
    with pytest.raises(NotionSyncError) as raised:
        await sync(notion_svc)
    assert raised.value.code == "upstream_rate_limited" and raised.value.retryable
    assert len(fake.requests) == notion.RETRY.attempts


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("written", "asked"),
    [("Office Wi-Fi", "wifi"), ("Office WiFi", "wi-fi"), ("Send an e-mail to IT", "email"),
     ("Email the team", "e-mail"), ("Check-in at the desk", "checkin")],
)  # fmt: skip
async def test_hyphenated_compounds_match_both_ways(svc: Services, written: str, asked: str) -> None:
    write(svc.docs_dir / "guide.md", f"# {written}\n\nThe details of it.\n")
    write(svc.docs_dir / "other.md", "# Parking\n\nLevel B2, after 7 pm.\n")
    async with Client(server_for(services=svc)) as client:
        found = await search(client, asked)
    assert [hit["source"] for hit in found["hits"]] == ["guide.md"], found
