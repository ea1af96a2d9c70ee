"""`truloop-mcp tools list --all`: every tool of each profile, built-in and plugins, without a client."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support import TRULOOP, child_env
from toolsets.profiles import build_profiles

EXAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "examples" / "tools"


def tools_list(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRULOOP, "tools", "list", "--all", *args], capture_output=True, text=True, timeout=60, env=child_env()
    )


def test_json_lists_each_profiles_built_in_tools_and_plugins(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    shutil.copytree(EXAMPLE_TOOLS, tools)
    (tools / "broken.py").write_text("this is not python\n")
    done = tools_list("--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"), "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    profiles = report["profiles"]
    assert list(profiles) == ["member", "notification-safe", "guest"]

    built_in = build_profiles()
    for name, rows in profiles.items():
        assert {row["name"] for row in rows if row["source"] == "built-in"} == set(built_in.profile(name).names())
    member = {row["name"]: row for row in profiles["member"]}
    assert member["word_stats"]["source"] == "plugin" and member["word_stats"]["toolset"] == "plugins"
    assert member["forget_memory"]["hints"] == ["destructive", "idempotent"]
    assert "deferred" in member["get_calendar_events"]["hints"]
    assert member["get_day_of_week"]["summary"].startswith("Return the day of the week")
    assert "create_event" not in {row["name"] for row in profiles["notification-safe"]}
    assert "save_memory" not in {row["name"] for row in profiles["guest"]}
    assert report["errors"] == [{"file": "broken.py", "error": report["errors"][0]["error"]}]


def test_text_without_a_tools_folder(tmp_path: Path) -> None:
    done = tools_list("--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    member = len(build_profiles().profile("member").names())
    assert f"member ({member} tools, 0 from plugins):" in text
    assert "notification-safe (" in text and "guest (" in text
    assert "  forget_memory " in text and "[destructive, idempotent]" in text
    assert "no tools folder" in text


def test_plain_tools_list_still_needs_a_tools_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [TRULOOP, "tools", "list", "--data-dir", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
    )
    assert done.returncode == 2 and "no tools folder" in done.stderr
