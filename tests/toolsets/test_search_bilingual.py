"""Cross-language search through MCP on each store backend (SQLite, then PostgreSQL): a Korean query finds an
English document or memory about the same thing and back, a text in the query's own language still ranks first,
and a query without a lexicon word searches as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support import server_for, services_for
from toolsets.services import Services

DOCS = {
    "rooms.md": "# Rooms\n\n## Booking\nMeeting rooms are booked in the shared calendar.\n",
    "dinner.md": "# Team dinner\n\n## Costs\nDinner is covered up to 40,000 KRW per person.\n",
    "회의실.md": "# 회의실 안내\n\n## 예약\n회의실은 공유 캘린더에서 예약합니다.\n",
    "wifi.md": "# Wifi\n\nThe office wifi password is on the fridge.\n",
}
MEMORIES = ["Minji is the calendar admin.", "준호가 노트북을 챙겨 줘요.", "Sora likes spicy food."]


@pytest.fixture
def svc(data_dir: Path, store_backend: str) -> Services:
    services = services_for(data_dir)
    services.docs_dir.mkdir(parents=True)
    for name, text in DOCS.items():
        (services.docs_dir / name).write_text(text, encoding="utf-8")
    return services


async def sources(client: Client, query: str) -> list[str]:
    result = await client.call_tool("search_knowledge_base", {"query": query})
    assert not result.is_error, result.content
    return [hit["source"] for hit in result.structured_content["hits"]]  # type: ignore[index]


async def remembered(client: Client, query: str) -> list[str]:
    result = await client.call_tool("search_memories", {"query": query})
    assert not result.is_error, result.content
    return [hit["record"]["content"] for hit in result.structured_content["memories"]]  # type: ignore[index]


@pytest.mark.anyio
async def test_a_korean_query_finds_english_documents_and_back(svc: Services) -> None:
    async with Client(server_for(user="alice", services=svc)) as client:
        assert "dinner.md" in await sources(client, "저녁")
        assert "회의실.md" in await sources(client, "booking a meeting room")
        assert await sources(client, "회의") == ["회의실.md", "rooms.md"]  # its own language first
        assert (await sources(client, "meeting room"))[:2] == ["rooms.md", "회의실.md"]
        assert (await sources(client, "회의실 예약"))[:2] == ["회의실.md", "rooms.md"]
        assert await sources(client, "fridge") == ["wifi.md"]  # no lexicon word: as before
        assert await sources(client, "얼룩말") == []  # nor in the lexicon: nothing
        assert await sources(client, "냉장고") == ["wifi.md"]  # a domain word (facilities): found in English


@pytest.mark.anyio
async def test_the_snippet_of_an_other_language_hit_shows_the_words_that_matched(svc: Services) -> None:
    async with Client(server_for(user="alice", services=svc)) as client:
        result = await client.call_tool("search_knowledge_base", {"query": "저녁"})
    hit: Any = next(h for h in result.structured_content["hits"] if h["source"] == "dinner.md")  # type: ignore[index]
    assert "**Dinner**" in hit["snippet"]


@pytest.mark.anyio
async def test_memories_are_found_across_the_two_languages(svc: Services) -> None:
    async with Client(server_for(user="alice", services=svc)) as client:
        for memory in MEMORIES:
            assert not (await client.call_tool("save_memory", {"content": memory})).is_error
        assert await remembered(client, "민지") == ["Minji is the calendar admin."]
        assert await remembered(client, "캘린더 관리자") == ["Minji is the calendar admin."]
        assert await remembered(client, "Junho's laptop") == ["준호가 노트북을 챙겨 줘요."]
        assert await remembered(client, "노트북") == ["준호가 노트북을 챙겨 줘요."]
        assert await remembered(client, "spicy") == ["Sora likes spicy food."]
        assert await remembered(client, "소라") == ["Sora likes spicy food."]
    async with Client(server_for(user="bob", services=svc)) as other:
        assert await remembered(other, "민지") == []  # alternates are scoped to their owner like every term


@pytest.mark.anyio
async def test_a_same_language_memory_ranks_above_its_translation(svc: Services) -> None:
    async with Client(server_for(user="alice", services=svc)) as client:
        for memory in ("팀 저녁은 금요일이에요.", "Team dinner is on Friday."):
            assert not (await client.call_tool("save_memory", {"content": memory})).is_error
        assert await remembered(client, "저녁") == ["팀 저녁은 금요일이에요.", "Team dinner is on Friday."]
        assert await remembered(client, "dinner") == ["Team dinner is on Friday.", "팀 저녁은 금요일이에요."]
