"""Search in Korean as well as English (issue 10), through MCP in both eras on the embedded store:
the issue's table row by row, English stemming, mixed text, names; plus the analyzer's versioned
re-indexing and the store migrations. Also two hardening items of the user search (issue 7): group
names compared in one canonical form, and control characters in a `search_users` query."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.support import MODES, TRULOOP, child_env, error_of, server_for, services_for
from toolsets.infra.store.knowledge import KnowledgeIndex
from toolsets.infra.store.knowledge import sqlite as knowledge_store
from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables
from toolsets.infra.store.memories import sqlite as memory_store
from toolsets.infra.store.memories.sqlite import SqliteMemories
from toolsets.infra.store.sqlite.database import Database
from toolsets.infra.store.users import UserRecord
from toolsets.infra.store.users import sqlite as user_store
from toolsets.infra.text import Analyzer, analyzer, match_expression
from toolsets.services import Services

POLICY = """# 근무 규정

## 회의실 사용
회의실은 공유 캘린더에서 예약합니다. 회의는 정시에 시작합니다.

## 휴가
연차는 다음 해로 최대 5일까지 이월됩니다. 휴가 신청은 캘린더에서 일정을 등록하고 팀장에게 승인을 받으세요.

## 출장
국내 출장은 KTX와 고속버스를 이용하고, 화상 회의는 Zoom으로 합니다.

## Meetings
Weekly meetings with the design team are on Thursdays.
"""


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error and result.structured_content is not None, result
    return result.structured_content


@pytest.fixture
def svc(tmp_path: Path) -> Services:
    services = services_for(tmp_path / "store")
    services.docs_dir.mkdir(parents=True)
    (services.docs_dir / "근무 규정.md").write_text(POLICY, encoding="utf-8")
    services.knowledge.debounce = 0
    return services


async def headings(client: Client, query: str) -> list[str]:
    found = data(await client.call_tool("search_knowledge_base", {"query": query, "limit": 3}))
    return [hit["heading"] for hit in found["hits"]]


async def memories(client: Client, query: str) -> list[str]:
    found = data(await client.call_tool("search_memories", {"query": query}))
    return [hit["record"]["content"] for hit in found["memories"]]


# -- the table, English stemming, mixed text ----------------------------------------------


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("회의", "근무 규정 > 회의실 사용"),  # the text holds 회의실, 회의는
        ("팀장", "근무 규정 > 휴가"),  # 팀장에게
        ("캘린더", "근무 규정 > 회의실 사용"),  # 캘린더에서 (both sections hold it)
        ("연차 이월", "근무 규정 > 휴가"),  # 연차는 ... 이월됩니다
        ("KTX", "근무 규정 > 출장"),  # KTX와
        ("zoom", "근무 규정 > 출장"),  # Zoom으로
        ("meeting", "근무 규정 > Meetings"),  # meetings
    ],
)
async def test_knowledge_search_finds_korean_words_inside_inflected_forms(
    mode: str, svc: Services, query: str, heading: str
) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        found = await headings(client, query)
    assert heading in found, found


@pytest.mark.anyio
@MODES
async def test_the_snippet_shows_the_matched_words(mode: str, svc: Services) -> None:
    async with Client(server_for(services=svc), mode=mode) as client:
        hits = data(await client.call_tool("search_knowledge_base", {"query": "팀장 캘린더"}))["hits"]
        english = data(await client.call_tool("search_knowledge_base", {"query": "meeting"}))["hits"]
    vacation = next(hit for hit in hits if hit["heading"] == "근무 규정 > 휴가")
    assert "**팀장에게**" in vacation["snippet"] and "**캘린더에서**" in vacation["snippet"]
    assert "**meetings**" in english[0]["snippet"]


@pytest.mark.anyio
@MODES
async def test_memory_search_in_korean_english_and_mixed(mode: str, tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path)), mode=mode) as client:
        for content in [
            "사용자가 제일 좋아하는 과일은 키위다.",
            "매주 목요일에는 민지와 점심을 먹는다.",
            "부산 출장은 항상 KTX로 간다.",
            "Weekly meetings with the design team are on Thursdays",
        ]:
            data(await client.call_tool("save_memory", {"content": content}))
        assert await memories(client, "키위") == ["사용자가 제일 좋아하는 과일은 키위다."]
        assert await memories(client, "민지") == ["매주 목요일에는 민지와 점심을 먹는다."]
        assert await memories(client, "ktx 부산") == ["부산 출장은 항상 KTX로 간다."]
        assert await memories(client, "meeting") == ["Weekly meetings with the design team are on Thursdays"]
    async with Client(server_for(services=services_for(tmp_path), user="bob"), mode=mode) as bob:
        assert await memories(bob, "키위") == []  # filtered to the caller


# -- people ------------------------------------------------------------------------------------

PEOPLE = [
    UserRecord(id="minji", username="mj", display_name="김민지", groups=["Kelvin", "опс"]),
    UserRecord(id="junho", username="junho", display_name="이준호", groups=["\u212aelvin"]),
    UserRecord(id="sora", username="sora", display_name="Park Sora", groups=["ОПС"]),
    UserRecord(id="minsu", username="minsu", display_name="Kim Minsu"),
]


async def people(tmp_path: Path) -> Services:
    services = services_for(tmp_path / "people")
    await services.users.import_users(PEOPLE)
    return services


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("query", ["민지", "김민지", "Minji Kim", "kim minji", "mj"])
async def test_search_users_finds_a_korean_name_in_hangul_and_in_latin_letters(
    mode: str, tmp_path: Path, query: str
) -> None:
    async with Client(server_for(services=await people(tmp_path), user="sora"), mode=mode) as client:
        found = data(await client.call_tool("search_users", {"query": query, "by": "username"}))
    assert [user["id"] for user in found["users"]][:1] == ["minji"], found
    assert "minsu" not in [user["id"] for user in found["users"]] or query in ("kim minji", "Minji Kim")


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("spelling", ["Kelvin", "kelvin", "KELVIN", "\u212aelvin", "Ｋelvin"])
async def test_a_group_is_one_group_whatever_its_case_or_compatibility_form(
    mode: str, tmp_path: Path, spelling: str
) -> None:
    """Before: the permission check used .lower() and the lookup COLLATE NOCASE (ASCII only), so a member
    of "\u212aelvin" (Kelvin sign) passed the check for "kelvin" and was shown the members of another
    row set. Now both use NFKC + casefold: every spelling names the same group, the caller among them."""
    async with Client(server_for(services=await people(tmp_path), user="junho"), mode=mode) as client:
        found = data(await client.call_tool("search_users", {"query": spelling, "by": "group"}))
    assert sorted(user["id"] for user in found["users"]) == ["junho", "minji"]


@pytest.mark.anyio
@MODES
async def test_non_ascii_case_never_lets_a_non_member_list_a_group(mode: str, tmp_path: Path) -> None:
    services = await people(tmp_path)
    async with Client(server_for(services=services, user="sora"), mode=mode) as sora:
        cyrillic = data(await sora.call_tool("search_users", {"query": "опс", "by": "group"}))
    async with Client(server_for(services=services, user="minsu"), mode=mode) as outsider:
        refused = [await outsider.call_tool("search_users", {"query": q, "by": "group"}) for q in ("ОПС", "опс")]
    # one group "ОПС"/"опс": its members are listed to either member, and include the caller
    assert sorted(user["id"] for user in cyrillic["users"]) == ["minji", "sora"]
    assert all(error_of(result)["code"] == "forbidden" for result in refused)


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("query", ["\x00", "\x00\x00", " \x00 ", "\u200b", "\x07\x1b"])
async def test_a_control_character_query_is_a_validation_error_not_a_wildcard(
    mode: str, tmp_path: Path, query: str
) -> None:
    async with Client(server_for(services=await people(tmp_path), user="sora"), mode=mode) as client:
        results = [await client.call_tool("search_users", {"query": query, "by": by}) for by in ("username", "group")]
        embedded = await client.call_tool("search_users", {"query": "zz\x00", "by": "username"})
    for result in results:
        assert error_of(result)["code"] == "validation"
    # a NUL inside a query is never a wildcard: it is refused, as NUL in any argument of any tool is
    assert (
        error_of(embedded)["code"] == "validation" and "query: must not contain the NUL" in error_of(embedded)["reason"]
    )


def test_a_nul_query_over_a_real_stdio_session_lists_nobody(tmp_path: Path) -> None:
    import anyio

    data_dir = tmp_path / "stdio-store"

    async def seed() -> None:
        services = services_for(data_dir)
        await services.users.import_users(PEOPLE)
        services.close()

    anyio.run(seed)
    params = StdioServerParameters(
        command=TRULOOP, args=["--data-dir", str(data_dir), "--user", "sora"], env=child_env()
    )

    async def session() -> tuple[Any, Any, Any]:
        async with Client(params, mode="legacy") as client:
            nul = await client.call_tool("search_users", {"query": "\x00", "by": "username"})
            group = await client.call_tool("search_users", {"query": "\x00", "by": "group"})
            name = await client.call_tool("search_users", {"query": "Minji Kim", "by": "username"})
        return nul, group, name

    nul, group, name = anyio.run(session)
    assert error_of(nul)["code"] == "validation" and error_of(group)["code"] == "validation"
    assert [user["id"] for user in data(name)["users"]][:1] == ["minji"]


# -- versioned re-indexing and migrations ---------------------------------------------------------


@pytest.mark.anyio
async def test_an_analyzer_change_reanalyzes_stored_chunks_with_progress_and_reads_no_file(svc: Services) -> None:
    for n in range(30):
        (svc.docs_dir / f"page-{n}.md").write_text(
            f"# 문서 {n}\n\n회의록 {n}번은 팀장에게 보냅니다.\n", encoding="utf-8"
        )
    first = await svc.knowledge.refresh()
    assert first.files_indexed == 31 and first.chunks_reanalyzed == 0
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    changed = KnowledgeIndex(svc.backend.knowledge_tables, svc.docs_dir, debounce=0, text=Analyzer("bigram"))
    stats = await changed.refresh(progress)
    assert stats.chunks_reanalyzed == first.chunks_written and stats.files_indexed == 0
    assert seen[0][:2] == (0, first.chunks_written) and seen[-1][:2] == (first.chunks_written, first.chunks_written)
    assert all(message for _, _, message in seen)
    assert (await changed.refresh()).chunks_reanalyzed == 0  # once
    assert [hit.title for hit in await changed.search("문서 7", 1)] == ["문서 7"]
    svc.close()


def _old_schema(db_path: Path, component: str, migrations: list[Any]) -> sqlite3.Connection:
    """A store as the previous release left it: only its first migration applied."""
    Database(db_path).ensure_schema_sync(component, migrations[:1])
    return sqlite3.connect(db_path)


@pytest.mark.anyio
async def test_an_old_store_is_migrated_and_its_rows_become_searchable(tmp_path: Path) -> None:
    path = tmp_path / "old" / "truloop.sqlite3"
    conn = _old_schema(path, "memory", memory_store.MIGRATIONS)
    conn.executemany(
        "INSERT INTO memories(id, user_id, content, tags, created_at) VALUES (?, ?, ?, '[]', '2026-01-01')",
        [("mem_1", "alice", "제일 좋아하는 과일은 키위다."), ("mem_2", "bob", "키위 알레르기가 있다.")],
    )
    conn.commit()
    _old_schema(path, "users", user_store.MIGRATIONS).close()
    conn.execute("INSERT INTO users(id, username, display_name, created_at, updated_at) VALUES "
                 "('minji', 'mj', '김민지', 'x', 'x'), ('sora', 'sora', 'Sora', 'x', 'x')")  # fmt: skip
    conn.executemany("INSERT INTO user_groups(user_id, group_name) VALUES (?, ?)",
                     [("minji", "ОПС"), ("minji", "опс"), ("sora", "опс")])  # fmt: skip
    conn.commit()
    _old_schema(path, "knowledge", knowledge_store.MIGRATIONS).close()
    conn.close()

    db = Database(path)
    store = SqliteMemories(db)
    assert [hit.record.id for hit in await store.search("alice", "키위", 5)] == ["mem_1"]
    users = user_store.SqliteUserStore(db)
    assert [user.id for user in await users.find_by_username("Minji Kim", 5)] == ["minji"]
    assert sorted(user.id for user in await users.group_members("Опс")) == ["minji", "sora"]
    assert (await users.get("minji")).groups == ["ОПС"]  # type: ignore[union-attr]  # two spellings, one group
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(POLICY, encoding="utf-8")
    index = KnowledgeIndex(SqliteKnowledgeTables(db), docs, debounce=0)
    assert (await index.search("팀장", 1))[0].heading == "근무 규정 > 휴가"
    await db.read(lambda c: c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')"))
    db.close()


def test_analysis_is_the_same_for_documents_and_queries() -> None:
    text = analyzer()
    assert text.query_terms("회의") == ["회의"] and "회의" in text.terms("회의실은 2층")
    assert text.terms("KTX와 Zoom으로 meetings") == ["ktx", "zoom", "meet"]
    assert text.terms("Ｋelvin café") == text.terms("kelvin CAFE")
    assert text.query_terms('"*:() NEAR \x00') == ["near"]


def test_every_store_builds_its_match_expression_one_way() -> None:
    terms = analyzer().query_terms("김민지 meetings")
    assert match_expression(terms) == '"김민" OR "민지" OR "meet"'  # knowledge and memories: any term
    assert match_expression(terms, require="all") == '"김민" AND "민지" AND "meet"'  # user names: every term
    assert match_expression(["meet"], prefix="u1a2b") == '"u1a2bmeet"'  # memories: scoped to their owner
    assert match_expression(analyzer().query_terms("?! ()")) is None


def test_a_session_that_never_searches_loads_no_stemmer_or_morphological_analyzer() -> None:
    code = (
        "import sys, server.runtime.server_factory, toolsets.profiles; "
        "print(sorted(m for m in ('snowballstemmer', 'kiwipiepy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
