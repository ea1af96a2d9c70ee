"""`--demo` after the README's first call: that call entered the user `local` in the directory, and nothing else,
so the demo still seeds. On a store with real data it adds nothing, and says so in the guide, which a host shows
(stderr is hidden by most hosts)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import INIT, INITIALIZED, TRULOOP, child_env

pytestmark = pytest.mark.timeout(90)

GUIDE = "truloop://guide"


def session(data: Path, *flags: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[int, Any], str]:
    """One stdio session of `truloop-mcp` (user `local`, as the README's): each call's result by its id, and stderr."""
    lines = [INIT, INITIALIZED]
    for number, (name, arguments) in enumerate(calls, start=1):
        if name == "read":
            lines.append({"jsonrpc": "2.0", "id": number, "method": "resources/read", "params": arguments})
        else:
            params = {"name": name, "arguments": arguments}
            lines.append({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
    done = subprocess.run(
        [TRULOOP, "--data-dir", str(data), *flags],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
    )
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m.get("result", m.get("error")) for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    return answers, done.stderr


def test_demo_seeds_a_store_that_only_the_readmes_first_call_touched(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, _ = session(data, calls=[("get_day_of_week", {"date": "2026-03-10"})])
    assert first[1]["isError"] is False
    assert (data / "truloop.sqlite3").exists()  # the first call made the store, and entered `local`

    found, stderr = session(data, "--demo", calls=[("search_users", {"query": "minji"}), ("get_events", {})])
    assert "already has data" not in stderr
    assert found[1]["isError"] is False and "김민지" in json.dumps(found[1], ensure_ascii=False)
    titles = sorted(event["title"] for event in found[2]["structuredContent"]["events"])
    assert titles == ["Design review", "Team dinner"]


def test_demo_on_a_store_with_data_adds_nothing_and_the_guide_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    saved, _ = session(data, calls=[("save_memory", {"content": "주차는 B2 / parking on B2"})])
    assert saved[1]["isError"] is False

    answers, stderr = session(data, "--demo", calls=[("read", {"uri": GUIDE}), ("search_users", {"query": "minji"})])
    assert "already has data, so no demo data was added" in stderr
    guide = answers[1]["contents"][0]["text"]
    assert "## 알림 / Notes" in guide
    assert f"the store in {data} already has data, so no demo data was added" in guide
    assert f"truloop-mcp --demo --data-dir {data}-demo" in guide
    assert "김민지" not in json.dumps(answers[2], ensure_ascii=False)


def test_without_demo_the_guide_has_no_notes(tmp_path: Path) -> None:
    answers, _ = session(tmp_path / "data", calls=[("read", {"uri": GUIDE})])
    assert "## 알림 / Notes" not in answers[1]["contents"][0]["text"]
