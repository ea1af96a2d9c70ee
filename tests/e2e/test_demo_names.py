"""A Korean user of `truloop-mcp --demo` asks for `민지님` over a real stdio session: the installed server finds
김민지, as it does for `민지`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import INIT, INITIALIZED, stdio_server_process

pytestmark = pytest.mark.timeout(90)


def test_search_users_with_an_honorific_finds_the_demo_person(tmp_path: Path) -> None:
    calls = [
        {"jsonrpc": "2.0", "id": number, "method": "tools/call",
         "params": {"name": "search_users", "arguments": {"query": query}}}
        for number, query in ((2, "민지님"), (3, "준호 팀장님"), (4, "민지"))
    ]  # fmt: skip
    lines = [INIT, INITIALIZED, *calls]
    with stdio_server_process("--demo", "--data-dir", str(tmp_path / "data"), "--user", "me") as proc:
        out, err = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=60)
    assert proc.returncode == 0, err.decode()
    replies = {reply["id"]: reply["result"] for reply in map(json.loads, out.decode().splitlines())}
    found = {number: [user["id"] for user in replies[number]["structuredContent"]["users"]] for number in (2, 3, 4)}
    assert found == {2: ["minji"], 3: ["junho"], 4: ["minji"]}
