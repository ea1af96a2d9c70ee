"""The newcomer's path on the command line: a terminal greeting, `--demo` on a used store, `--help`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support import TRULOOP, child_env, read_until, stdio_server_process

INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def test_started_in_a_terminal_the_stdio_server_says_what_it_is_on_stderr(tmp_path: Path) -> None:
    with stdio_server_process("--data-dir", str(tmp_path / "data"), use_pty=True) as proc:
        assert proc.stderr is not None
        greeting = read_until(proc.stderr, "Ctrl-C to quit")
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    text = greeting + err.decode()
    assert out == b""
    assert "MCP server" in text and "JSON-RPC" in text and "Ctrl-C to quit" in text
    assert f"claude mcp add truloop -- {os.path.abspath(TRULOOP)}" in text
    assert 2 <= len(text.strip().splitlines()) <= 4


def test_a_pipe_gets_no_greeting(tmp_path: Path) -> None:
    proc = subprocess.run(
        [TRULOOP, "--data-dir", str(tmp_path / "data")],
        input=json.dumps(INIT) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env(),
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout.splitlines()[0])["id"] == "init"


def test_demo_on_a_used_store_says_that_it_added_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"

    def demo(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TRULOOP, "--demo", "--data-dir", str(data), *flags],
            input=json.dumps(INIT) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            env=child_env(),
        )

    first, second = demo("--log-level", "INFO"), demo()
    assert first.returncode == 0 and "INFO truloop.demo: demo data seeded" in first.stderr  # routine: INFO
    assert "already has data" not in first.stderr and "WARNING" not in first.stderr
    assert second.returncode == 0
    assert f"WARNING truloop.demo: --demo: the store in {data} already has data, so no demo data" in second.stderr
    assert f"truloop-mcp --demo --data-dir {data}-demo" in second.stderr
    assert json.loads(second.stdout.splitlines()[0])["id"] == "init"


def test_help_lists_the_subcommands() -> None:
    proc = subprocess.run([TRULOOP, "--help"], capture_output=True, text=True, timeout=30, env=child_env())
    assert proc.returncode == 0
    assert "users import FILE" in proc.stdout and "notion sync" in proc.stdout
