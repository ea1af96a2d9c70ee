"""One table of awkward queries, run through the MCP client over the real server on each store backend
(SQLite, then PostgreSQL): search_knowledge_base, search_users and search_memories answer every query the
same way on both, and never with an internal error (possessives, lone letters, stop words, symbols, NUL,
emoji, Korean particles, mixed Korean and English)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.people import PEOPLE
from tests.support import error_of, gates_off, server_for, services_for
from toolsets.infra.store.users import UserRecord

DOCS = {
    "wifi.md": "# Office wifi\n\nWhat's the wifi password? It is on the fridge, next to Sora's desk.\n",
    "travel.md": "# Travel\n\n## KTX 예약\n\n출장 KTX는 회사 카드로 예약합니다. Book the meeting room first.\n",
    "letters.md": "# Letters\n\nPlan a b c: the start of the alphabet.\n",
}
MEMORIES = [
    "Sora's birthday is in May",
    "The wifi password at home is on the router",
    "회의는 KTX와 함께 meeting room 3에서",
]
SORA = UserRecord(id="sora", username="sora", display_name="Sora Han", groups=["team"])

# query -> (search_knowledge_base, search_users, search_memories): "validation", or what was found
# (knowledge: files; users: ids; memories: the first word of each memory).
TABLE: dict[str, tuple[Any, Any, Any]] = {
    "Sora's": ({"wifi.md"}, {"sora"}, {"Sora's"}),
    "what's the wifi password": ({"wifi.md", "letters.md", "travel.md"}, set(), {"The"}),
    "sora s": ({"wifi.md"}, {"sora"}, {"Sora's"}),
    "s": ("validation", {"sora", "gus", "gwen"}, "validation"),
    "%s": ("validation", set(), "validation"),
    "a b c": ({"letters.md"}, set(), set()),
    "the of and": ({"wifi.md", "letters.md", "travel.md"}, set(), {"The"}),
    "!!!": ("validation", "validation", "validation"),
    "%%": ("validation", "validation", "validation"),
    "wi\x00fi": ("validation", "validation", "validation"),
    "🙂": ("validation", "validation", "validation"),
    "은 는 이 가": (set(), set(), set()),
    "KTX와 회의 meeting": ({"travel.md"}, set(), {"회의는"}),
    "Sora의 wifi": ({"wifi.md"}, set(), {"Sora's", "The"}),
}
SEARCHES = ("search_knowledge_base", "search_users", "search_memories")


def found(tool: str, result: Any) -> Any:
    if result.is_error:
        error = error_of(result)
        if error["code"] == "validation":
            assert "query" in error["reason"], error
        return error["code"]
    body = result.structured_content
    if tool == "search_knowledge_base":
        return {hit["source"] for hit in body["hits"]}
    if tool == "search_users":
        return {user["id"] for user in body["users"]}
    return {hit["record"]["content"].split()[0] for hit in body["memories"]}


@pytest.mark.anyio
async def test_every_search_answers_the_query_table_the_same_on_each_backend(
    store_backend: str, tmp_path: Path
) -> None:
    data_dir, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    seeding = services_for(data_dir)
    await seeding.users.import_users([*PEOPLE, SORA])
    await seeding.aclose()
    server = server_for(user="alice", data_dir=data_dir, docs_dir=docs, gates=gates_off(tmp_path))
    async with Client(server, mode="legacy") as client:
        for memory in MEMORIES:
            saved = await client.call_tool("save_memory", {"content": memory})
            assert not saved.is_error, saved.content
        answers = {
            query: tuple([found(tool, await client.call_tool(tool, {"query": query})) for tool in SEARCHES])
            for query in TABLE
        }
    wrong = {query: (answers[query], TABLE[query]) for query in TABLE if answers[query] != TABLE[query]}
    assert not wrong, f"{store_backend}: query -> (answered, expected): {wrong}"


@pytest.mark.anyio
async def test_a_document_holding_nul_is_indexed_and_found_on_each_backend(store_backend: str, tmp_path: Path) -> None:
    """PostgreSQL cannot store NUL in text: a file holding it is indexed (NUL read as U+FFFD, as any byte that is
    not text) on both backends, not an internal error on one."""
    data_dir, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    (docs / "binary-ish.md").write_bytes(b"# Router\n\nThe wifi\x00password is on the router.\x00\n")
    server = server_for(user="alice", data_dir=data_dir, docs_dir=docs, gates=gates_off(tmp_path))
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("search_knowledge_base", {"query": "wifi password"})
    assert not result.is_error, result.content
    body = result.structured_content
    assert body is not None and [hit["source"] for hit in body["hits"]] == ["binary-ish.md"]
    assert "\x00" not in body["hits"][0]["snippet"]


@pytest.mark.parametrize("text", ["s", "Sora's", "what's", "%s", "S", "ſ", "it's the cat's"])
def test_the_analyzer_never_makes_an_empty_term(text: str) -> None:
    from toolsets.infra.text import analyzer

    text_analyzer = analyzer()
    assert "" not in text_analyzer.terms(text) and "" not in text_analyzer.query_terms(text)
    assert "  " not in text_analyzer.term_string(text)


def test_both_backends_quoting_refuses_an_empty_term() -> None:
    from toolsets.infra.store.postgres.search import query_terms, tsvector_literal
    from toolsets.infra.text import match_expression

    with pytest.raises(ValueError, match="empty search term"):
        query_terms(["sora", ""])
    with pytest.raises(ValueError, match="empty search term"):
        query_terms([""], prefix="k1")  # a bare owner key is no term either
    with pytest.raises(ValueError, match="empty search term"):
        match_expression(["sora", ""], prefix="k1")
    assert query_terms(["sora's"]) == ["'sora''s'"] and tsvector_literal([("a  b", "D")]) == "'a':1 'b':2"
