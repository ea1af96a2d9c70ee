"""The memory toolset: through the MCP client in both eras, over the embedded store and over Supermemory
(its HTTP API mocked with bodies shaped like the real one), plus the store's own contract."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from pydantic import SecretStr

from tests.support import MODES, answering, payload, server_for, services_for
from toolsets.infra.store.memories import MemoryRecord
from toolsets.infra.store.memories.postgres import PgMemories
from toolsets.infra.store.memories.sqlite import SqliteMemories, insert_memory, match_expression
from toolsets.infra.store.sqlite.backend import SqliteBackend
from toolsets.infra.upstream.keys import UpstreamKeys
from toolsets.infra.upstream.supermemory import SupermemoryMemories, container_tag
from toolsets.services import Services, memory_store

API_KEY = "sm_test_key_never_shown"

HOSTILE_QUERIES = [
    'foo"bar OR (',
    '"unterminated',
    "NEAR(sushi ramen, 2)",
    "content:sushi",
    "sushi*",
    "AND OR NOT",
    "-sushi +ramen ^tags",
    "{content tags}: sushi",
    "sushi' ; DROP TABLE memories; --",
]


def data(result: Any) -> dict[str, Any]:
    return payload(result)


async def save(client: Client, content: str, tags: list[str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"content": content}
    if tags is not None:
        args["tags"] = tags
    result = await client.call_tool("save_memory", args)
    assert not result.is_error, result
    return data(result)


async def search(client: Client, query: str, limit: int | None = None) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"query": query}
    if limit is not None:
        args["limit"] = limit
    result = await client.call_tool("search_memories", args)
    assert not result.is_error, result
    return data(result)["memories"]


def contents(hits: list[dict[str, Any]]) -> list[str]:
    return [hit["record"]["content"] for hit in hits]


# -- the embedded store, through MCP ---------------------------------------------------------


@pytest.mark.anyio
@MODES
async def test_annotations_are_truthful(mode: str) -> None:
    async with Client(server_for(), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    save_ann, search_ann, forget_ann = (
        tools[name].annotations for name in ("save_memory", "search_memories", "forget_memory")
    )
    assert save_ann and not save_ann.read_only_hint and not save_ann.destructive_hint and not save_ann.idempotent_hint
    assert search_ann and search_ann.read_only_hint and not search_ann.destructive_hint
    assert forget_ann and forget_ann.destructive_hint and not forget_ann.read_only_hint
    assert tools["save_memory"].input_schema["properties"]["content"]["maxLength"] == 4000


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_saved_memory_comes_back_ranked_by_relevance(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        saved = await save(client, "Alice loves sushi, especially salmon sushi and tuna sushi")
        await save(client, "Lunch meeting with Bob; he picked the sushi place")
        await save(client, "Sister's birthday is on May 3")
        await save(client, "Prefers window seats on long flights")
        hits = await search(client, "sushi salmon")
        limited = await search(client, "sushi", limit=1)
    assert saved["id"].startswith("mem_") and saved["tags"] == []
    assert dt.datetime.fromisoformat(saved["created_at"]).utcoffset() == dt.timedelta(0)
    assert contents(hits) == [
        "Alice loves sushi, especially salmon sushi and tuna sushi",
        "Lunch meeting with Bob; he picked the sushi place",
    ]
    assert hits[0]["score"] > hits[1]["score"]
    assert hits[0]["record"]["id"] == saved["id"]
    assert len(limited) == 1


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_stemming_finds_other_word_forms(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        await save(client, "Weekly meetings with the design team are on Thursdays")
        hits = await search(client, "meeting")
    assert contents(hits) == ["Weekly meetings with the design team are on Thursdays"]


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_tags_are_kept_cleaned_and_searchable(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        saved = await save(client, "Mom's birthday is June 12", tags=["  family ", "birthdays", "family"])
        await save(client, "Favourite ramen shop is in Hongdae", tags=["food"])
        by_tag = await search(client, "family")
    assert saved["tags"] == ["family", "birthdays"]
    assert contents(by_tag) == ["Mom's birthday is June 12"]
    assert by_tag[0]["record"]["tags"] == ["family", "birthdays"]


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_forget_runs_without_elicitation_under_auto_policy(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        kept = await save(client, "Allergic to peanuts")
        gone = await save(client, "Allergic to cats (wrong, it was dogs)")
        forgotten = await client.call_tool("forget_memory", {"memory_id": gone["id"]})
        again = await client.call_tool("forget_memory", {"memory_id": gone["id"]})
        hits = await search(client, "allergic")
    assert not forgotten.is_error and data(forgotten) == {"memory_id": gone["id"], "forgotten": True}
    assert again.is_error and data(again)["code"] == "not_found"
    assert "search_memories" in data(again)["reason"]
    assert [hit["record"]["id"] for hit in hits] == [kept["id"]]


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_declined_forget_leaves_the_memory(mode: str, tmp_path: Path) -> None:
    svc = services_for(tmp_path)
    async with Client(server_for(services=svc), mode=mode) as client:
        saved = await save(client, "Parks the car on level B2")
    seen: list[str] = []
    declining = Client(server_for(services=svc), mode=mode, elicitation_callback=answering("decline", seen=seen))
    async with declining as client:
        result = await client.call_tool("forget_memory", {"memory_id": saved["id"]})
        hits = await search(client, "car")
    assert result.is_error and data(result)["status"] == "cancelled"
    assert seen == ["Forget the memory 'Parks the car on level B2'? This cannot be undone."]  # its text, not its id
    assert [hit["record"]["id"] for hit in hits] == [saved["id"]]


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_another_user_can_neither_find_nor_forget_alices_memories(mode: str, tmp_path: Path) -> None:
    svc = services_for(tmp_path)
    async with Client(server_for(services=svc), mode=mode) as alice:
        secret = await save(alice, "Alice's locker code is 4512", tags=["locker"])
    async with Client(server_for(services=svc, user="bob"), mode=mode) as bob:
        await save(bob, "Bob's locker is next to the gym door")
        bob_hits = await search(bob, "alice locker code 4512")
        theirs = await bob.call_tool("forget_memory", {"memory_id": secret["id"]})
        unknown = await bob.call_tool("forget_memory", {"memory_id": "mem_0000"})
    async with Client(server_for(services=svc), mode=mode) as alice:
        alice_hits = await search(alice, "locker")
    assert contents(bob_hits) == ["Bob's locker is next to the gym door"]
    assert theirs.is_error and data(theirs)["code"] == "not_found"
    # another user's id is answered exactly like an id that never existed
    assert data(theirs)["reason"].replace(secret["id"], "<id>") == data(unknown)["reason"].replace("mem_0000", "<id>")
    assert contents(alice_hits) == ["Alice's locker code is 4512"]


@pytest.mark.anyio
@MODES
async def test_invalid_arguments_are_validation_errors_that_say_what_is_valid(mode: str, tmp_path: Path) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("search_memories", {"query": ""}, "words"),
        ("search_memories", {"query": "   "}, "words"),
        ("search_memories", {"query": '?!"() *:-'}, "words"),
        ("search_memories", {"query": "x" * 501}, "500"),
        ("search_memories", {"query": "sushi", "limit": 0}, "limit"),
        ("search_memories", {"query": "sushi", "limit": 51}, "limit"),
        ("save_memory", {"content": "x" * 4001}, "4,000"),
        ("save_memory", {"content": "  \n "}, "empty"),
        ("save_memory", {"content": "ok", "tags": [""]}, "tags"),
        ("save_memory", {"content": "ok", "tags": ["t" * 41]}, "40"),
        ("save_memory", {"content": "ok", "tags": [f"t{i}" for i in range(11)]}, "at most 10"),
        ("forget_memory", {"memory_id": " "}, "memory_id"),
    ]
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        for tool, args, fragment in cases:
            result = await client.call_tool(tool, args)
            assert result.is_error, (tool, args)
            assert data(result)["code"] == "validation", (tool, args)
            assert fragment in data(result)["reason"], (tool, args, data(result)["reason"])
        longest = await save(client, "y" * 4000)
    assert len(longest["content"]) == 4000


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
@MODES
async def test_fts_syntax_in_queries_is_searched_as_plain_words(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        await save(client, 'Likes "sushi" and ramen (not udon)')
        outcomes = {query: await client.call_tool("search_memories", {"query": query}) for query in HOSTILE_QUERIES}
        hostile_content = await save(client, 'foo"bar OR ( NEAR(a b) *')
        found = await search(client, "foo bar near")
    for query, result in outcomes.items():
        assert not result.is_error, (query, result)
    assert contents(data(outcomes['"unterminated'])["memories"]) == []
    assert contents(data(outcomes["sushi*"])["memories"]) == ['Likes "sushi" and ramen (not udon)']
    assert contents(data(outcomes["NEAR(sushi ramen, 2)"])["memories"]) == ['Likes "sushi" and ramen (not udon)']
    assert contents(found) == [hostile_content["content"]]


# -- Supermemory, over a mocked HTTP API -----------------------------------------------------


class FakeSupermemory:
    """Answers like api.supermemory.ai's v4 memory endpoints and records every request."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.spaces: dict[str, dict[str, dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content)
        tag = body["containerTag"]
        if (request.method, request.url.path) == ("POST", "/v4/memories"):
            space = self.spaces.setdefault(tag, {})
            created = []
            for item in body["memories"]:
                memory_id = f"mem_sm{next(self._ids)}"
                space[memory_id] = {
                    "id": memory_id,
                    "memory": item["content"],
                    "isStatic": item.get("isStatic", False),
                    "createdAt": "2026-08-10T12:00:00.000Z",
                    "forgetAfter": None,
                    "forgetReason": None,
                    "metadata": item.get("metadata"),
                }
                created.append(space[memory_id])
            return httpx.Response(200, json={"documentId": f"doc_{next(self._ids)}", "memories": created})
        if (request.method, request.url.path) == ("POST", "/v4/search"):
            if tag not in self.spaces:
                return httpx.Response(404, json={"error": "Container tag not found"})
            words = set(body["q"].lower().split())
            scored = []
            for memory in self.spaces[tag].values():
                overlap = len(words & set(memory["memory"].lower().split()))
                if overlap:
                    scored.append(
                        {
                            "id": memory["id"],
                            "memory": memory["memory"],
                            "similarity": round(0.5 + overlap / 10, 2),
                            "updatedAt": memory["createdAt"],
                            "metadata": memory["metadata"],
                            "version": 1,
                        }
                    )
            scored.sort(key=lambda item: -item["similarity"])
            results = scored[: body.get("limit", 10)]
            return httpx.Response(200, json={"results": results, "total": len(results), "timing": 42})
        if (request.method, request.url.path) == ("DELETE", "/v4/memories"):
            if self.spaces.get(tag, {}).pop(body["id"], None) is None:
                return httpx.Response(404, json={"error": "Memory not found"})
            return httpx.Response(200, json={"id": body["id"], "forgotten": True})
        return httpx.Response(404, json={"error": "Not found"})


def supermemory_services(tmp_path: Path, handler: Any) -> Services:
    keys = UpstreamKeys(supermemory=SecretStr(API_KEY))
    return services_for(tmp_path, transport=httpx.MockTransport(handler), keys=keys)


def test_backend_choice_follows_the_api_key(tmp_path: Path) -> None:
    assert isinstance(memory_store(services_for(tmp_path)), SqliteMemories)
    blank = UpstreamKeys(supermemory=SecretStr("  "))
    assert isinstance(memory_store(services_for(tmp_path, keys=blank)), SqliteMemories)
    assert isinstance(supermemory_services(tmp_path, FakeSupermemory()).memories, SupermemoryMemories)


@pytest.mark.anyio
@MODES
async def test_supermemory_save_search_forget(mode: str, tmp_path: Path) -> None:
    fake = FakeSupermemory()
    svc = supermemory_services(tmp_path, fake)
    async with Client(server_for(services=svc), mode=mode) as client:
        empty = await search(client, "anything")  # a user with no space yet
        saved = await save(client, "Prefers aisle seats on trains", tags=["travel"])
        await save(client, "Takes trains to Busan on weekends")
        hits = await search(client, "aisle seats on trains", limit=3)
        forgotten = await client.call_tool("forget_memory", {"memory_id": saved["id"]})
        missing = await client.call_tool("forget_memory", {"memory_id": saved["id"]})
    async with Client(server_for(services=svc, user="bob"), mode=mode) as bob:
        bob_hits = await search(bob, "train Busan")
        bob_forget = await bob.call_tool("forget_memory", {"memory_id": "mem_sm3"})

    assert empty == []
    assert saved == {
        "id": "mem_sm1",
        "content": "Prefers aisle seats on trains",
        "tags": ["travel"],
        "created_at": "2026-08-10T12:00:00+00:00",
    }
    assert contents(hits) == ["Prefers aisle seats on trains", "Takes trains to Busan on weekends"]
    assert hits[0]["score"] > hits[1]["score"] and hits[0]["record"]["tags"] == ["travel"]
    assert not forgotten.is_error and data(forgotten)["forgotten"] is True
    assert missing.is_error and data(missing)["code"] == "not_found"
    assert bob_hits == [] and data(bob_forget)["code"] == "not_found"
    assert "mem_sm3" in fake.spaces[container_tag("alice")]  # bob's forget did not reach alice's space

    alice_tag, bob_tag = container_tag("alice"), container_tag("bob")
    assert alice_tag != bob_tag and alice_tag.startswith("truloop_user_") and len(alice_tag) <= 100
    sent = [(r.method, r.url.host, r.url.path, json.loads(r.content)) for r in fake.requests]
    assert [(method, path) for method, _, path, _ in sent] == [
        ("POST", "/v4/search"),
        ("POST", "/v4/memories"),
        ("POST", "/v4/memories"),
        ("POST", "/v4/search"),
        ("DELETE", "/v4/memories"),
        ("DELETE", "/v4/memories"),
        ("POST", "/v4/search"),
        ("DELETE", "/v4/memories"),
    ]
    assert {host for _, host, _, _ in sent} == {"api.supermemory.ai"}
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in fake.requests)
    assert [body["containerTag"] for _, _, _, body in sent] == [alice_tag] * 6 + [bob_tag] * 2
    assert sent[1][3]["memories"] == [
        {"content": "Prefers aisle seats on trains", "metadata": {"tags": ["travel"], "source": "truloop"}}
    ]
    assert sent[3][3] == {"q": "aisle seats on trains", "containerTag": alice_tag, "limit": 3, "searchMode": "memories"}
    assert sent[4][3] == {"containerTag": alice_tag, "id": "mem_sm1"}


def failing(status: int | None, body: Any = None) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if status is None:
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(status, json=body)

    return handler


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("status", "body", "code", "retryable", "says"),
    [
        (401, {"error": "Unauthorized", "details": "Invalid API key"}, "upstream_auth", False, "SUPERMEMORY_API_KEY"),
        (403, {"error": "Forbidden"}, "upstream_auth", False, "SUPERMEMORY_API_KEY"),
        (
            400,
            {"error": "Invalid request", "details": "content: too long"},
            "upstream_rejected",
            False,
            "content: too long",
        ),
        (429, {"error": "Rate limit exceeded"}, "upstream_rate_limited", True, "may be retried"),
        (500, {"error": "Internal server error"}, "upstream_unavailable", True, "may be retried"),
        (None, None, "upstream_unavailable", True, "may be retried"),
    ],
)
async def test_supermemory_failures_are_mapped(
    mode: str, tmp_path: Path, status: int | None, body: Any, code: str, retryable: bool, says: str
) -> None:
    svc = supermemory_services(tmp_path, failing(status, body))
    async with Client(server_for(services=svc), mode=mode) as client:
        results = [
            await client.call_tool("save_memory", {"content": "Prefers tea"}),
            await client.call_tool("search_memories", {"query": "tea"}),
            await client.call_tool("forget_memory", {"memory_id": "mem_x"}),
        ]
    for result in results:
        error = data(result)
        assert result.is_error and error["code"] == code and error["retryable"] is retryable, error
        assert says in error["reason"]
        assert API_KEY not in error["reason"] and API_KEY not in result.content[0].text  # type: ignore[union-attr]
    if status is None:
        assert "Supermemory is unavailable" in data(results[0])["reason"]
        assert "already have been saved" in data(results[0])["reason"]  # a timed-out save may have landed


@pytest.mark.anyio
async def test_supermemory_resends_reads_but_never_a_save_that_may_have_landed(tmp_path: Path) -> None:
    fake = FakeSupermemory()
    unavailable = {("POST", "/v4/memories"), ("POST", "/v4/search"), ("DELETE", "/v4/memories")}

    def once_unavailable(request: httpx.Request) -> httpx.Response:
        route = (request.method, request.url.path)
        if route in unavailable:  # each route's first request meets a 503, the next one gets through
            unavailable.discard(route)
            fake.requests.append(request)
            return httpx.Response(503, json={"error": "Service unavailable"})
        return fake(request)

    async with Client(server_for(services=supermemory_services(tmp_path, once_unavailable))) as client:
        failed_save = await client.call_tool("save_memory", {"content": "Prefers tea"})
        saved = await client.call_tool("save_memory", {"content": "Prefers tea"})
        hits = await search(client, "tea")
        forgotten = await client.call_tool("forget_memory", {"memory_id": data(saved)["id"]})

    assert data(failed_save)["code"] == "upstream_unavailable" and data(failed_save)["retryable"] is True
    assert contents(hits) == ["Prefers tea"] and data(forgotten)["forgotten"] is True
    routes = [(r.method, r.url.path) for r in fake.requests]
    assert routes == [
        ("POST", "/v4/memories"),  # 503: a save is not resent (it may have been stored)
        ("POST", "/v4/memories"),
        ("POST", "/v4/search"),  # 503, then resent
        ("POST", "/v4/search"),
        ("DELETE", "/v4/memories"),  # 503, then resent
        ("DELETE", "/v4/memories"),
    ]


@pytest.mark.anyio
async def test_supermemory_connection_error_is_retryable(tmp_path: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with Client(server_for(services=supermemory_services(tmp_path, refuse))) as client:
        result = await client.call_tool("search_memories", {"query": "tea"})
    assert data(result)["code"] == "upstream_unavailable" and data(result)["retryable"] is True


# -- the store's contract ----------------------------------------------------------------------


def fts_integrity(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")  # raises when out of sync


@pytest.mark.usefixtures("store_backend")
@pytest.mark.anyio
async def test_200_concurrent_saves_lose_nothing(tmp_path: Path) -> None:
    svc = services_for(tmp_path)
    store = svc.memories
    assert isinstance(store, PgMemories if svc.backend.shared else SqliteMemories)
    saved: list[MemoryRecord] = []

    async def writer(worker: int) -> None:
        for n in range(20):
            saved.append(
                await store.save(f"user{worker % 4}", f"note {n} from worker {worker} about pelicans", ["bulk"])
            )

    async with anyio.create_task_group() as group:
        for worker in range(10):
            group.start_soon(writer, worker)

    assert len(saved) == 200 and len({record.id for record in saved}) == 200
    assert sum([await store.count(f"user{u}") for u in range(4)]) == 200
    assert len(await store.search("user0", "pelicans", 50)) == 50
    if isinstance(svc.backend, SqliteBackend):
        await svc.backend.db.read(fts_integrity)
    await svc.aclose()


@pytest.mark.anyio
async def test_a_write_that_fails_midway_leaves_nothing_behind(tmp_path: Path) -> None:
    svc = services_for(tmp_path)
    assert isinstance(svc.backend, SqliteBackend)
    db = svc.backend.db
    store = SqliteMemories(db)
    await store.save("alice", "Existing memory about kayaks", [])
    half = MemoryRecord(
        id="mem_half", content="Half written memory about zeppelins", tags=[], created_at="2026-01-01T00:00:00+00:00"
    )

    def insert_then_fail(conn: sqlite3.Connection) -> None:
        insert_memory(conn, "alice", half)
        raise RuntimeError("crash between statements")

    with pytest.raises(RuntimeError):
        await db.write(insert_then_fail)

    assert await store.count("alice") == 1
    assert await store.search("alice", "zeppelins", 5) == []
    fts_rows = await db.read(
        lambda conn: conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zeppelins'").fetchone()[
            0
        ]
    )
    assert fts_rows == 0
    await db.read(fts_integrity)
    assert [hit.record.content for hit in await store.search("alice", "kayaks", 5)] == ["Existing memory about kayaks"]
    svc.close()


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_match_expression_quotes_every_word(query: str) -> None:
    expression = match_expression("alice", query)
    assert expression is not None
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    conn.execute("SELECT * FROM t WHERE t MATCH ?", (expression,)).fetchall()  # would raise on FTS syntax
    assert all(part.startswith('"') and part.endswith('"') for part in expression.split(" OR "))
