"""A Korean newcomer's first searches on `truloop-mcp --demo`, over a real stdio session on a fresh data dir:
Korean queries find the Korean and the English documents and memories, English queries the Korean ones too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support import TRULOOP, child_env

SEARCHES: dict[int, tuple[str, str]] = {
    2: ("search_knowledge_base", "회의"),
    3: ("search_knowledge_base", "회의실"),
    4: ("search_knowledge_base", "저녁"),
    5: ("search_knowledge_base", "meeting room"),
    6: ("search_knowledge_base", "dinner"),
    7: ("search_memories", "민지"),
    8: ("search_memories", "laptop"),
}


def demo_session(data: Path) -> dict[int, Any]:
    lines: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]  # fmt: skip
    for number, (tool, query) in SEARCHES.items():
        call = {"name": tool, "arguments": {"query": query}}
        lines.append({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
    proc = subprocess.run(
        [TRULOOP, "--demo", "--data-dir", str(data), "--user", "me"],
        input="\n".join(json.dumps(line) for line in lines) + "\n",
        capture_output=True, text=True, timeout=60, env=child_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, proc.stdout.splitlines())}
    for number in SEARCHES:
        assert not replies[number]["result"].get("isError"), replies[number]
    return {number: replies[number]["result"]["structuredContent"] for number in SEARCHES}


def test_korean_and_english_searches_find_the_demo_documents_and_memories_in_both_languages(tmp_path: Path) -> None:
    found = demo_session(tmp_path / "data")
    titles = {number: [hit["title"] for hit in found[number]["hits"]] for number in range(2, 7)}
    assert titles[2][0] == "회의실 안내"  # the Korean document about meetings first, then the English ones
    assert {"회의실 안내", "Office Guide", "Team Handbook"} <= set(titles[2])
    assert titles[3][0] == "회의실 안내" and "Office Guide" in titles[3]
    assert titles[4] == ["팀 핸드북", "Team Handbook"]
    assert titles[5][0] == "Office Guide" and "회의실 안내" in titles[5]
    assert titles[6] == ["Team Handbook", "팀 핸드북"]
    memories = {number: [hit["record"]["content"] for hit in found[number]["memories"]] for number in (7, 8)}
    assert memories[7] == ["Minji is the calendar admin."]
    assert memories[8] == ["준호가 새 노트북과 계정을 챙겨 줘요."]
