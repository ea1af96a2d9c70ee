"""The data folder is private: a real `truloop-mcp` over stdio (even under umask 000) creates it 0700 and every
file in it 0600 (the SQLite store with its -wal and -shm, the canary state of a plugin with a candidate, the
plugin's folder, the audit log), and an existing folder that others can read gets one warning naming the chmod."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.plugin_files import plugin_source
from tests.support import INIT, INITIALIZED, TRULOOP, child_env, read_until

STABLE = 'def run(input_data, context):\n    return {"v": "stable"}\n'
CANDIDATE = 'def run(input_data, context):\n    return {"v": "candidate"}\n'


def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def start(data: Path, audit: Path, tools: Path, umask: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [TRULOOP, "--data-dir", str(data), "--audit-log", str(audit), "--tools-dir", str(tools),
         "--user", "local", "--timezone", "UTC"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), umask=umask,
    )  # fmt: skip


def send(proc: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
    proc.stdin.flush()


def modes(*roots: Path) -> dict[str, int]:
    """Every folder and file under the roots (and the roots), by path, with its permission bits."""
    found: dict[str, int] = {}
    for root in roots:
        found[str(root)] = root.stat().st_mode & 0o777
        if root.is_dir():
            for folder, dirs, files in os.walk(root):
                for name in dirs + files:
                    path = Path(folder) / name
                    found[str(path)] = path.lstat().st_mode & 0o777
    return found


def test_the_data_folder_and_every_file_the_server_writes_are_private_even_under_umask_000(tmp_path: Path) -> None:
    data, audit, tools = tmp_path / "data", tmp_path / "logs" / "tool-calls.jsonl", tmp_path / "tools"
    tools.mkdir()
    (tools / "lookup.py").write_text(plugin_source("lookup", STABLE))
    (tools / "lookup.canary.py").write_text(plugin_source("lookup", CANDIDATE))
    proc = start(data, audit, tools, umask=0o000)
    try:
        send(proc, INIT, INITIALIZED, call(2, "save_memory", {"content": "비밀번호는 qwerty123\u2028pw=Tr0ub4dor&3"}))
        send(proc, call(3, "lookup", {}), call(4, "search_memories", {"query": "비밀번호"}))
        assert proc.stdout is not None
        read_until(proc.stdout, '"id":4', timeout=30)
        deadline = time.monotonic() + 20
        while not (audit.exists() and audit.read_bytes().count(b"\n") >= 6) and time.monotonic() < deadline:
            time.sleep(0.05)
        found = modes(data, audit)  # while serving: SQLite's -wal and -shm exist only while the store is open
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=20)
    for name in ("truloop.sqlite3", "truloop.sqlite3-wal", "truloop.sqlite3-shm", "canary/state.json"):
        assert str(data / name) in found, sorted(found)
    assert str(data / "plugins" / "lookup") in found
    loose = {path: oct(mode) for path, mode in found.items() if mode != (0o700 if Path(path).is_dir() else 0o600)}
    assert loose == {}
    assert (tmp_path / "logs").stat().st_mode & 0o777 == 0o700
    lines = audit.read_text(encoding="utf-8").splitlines()  # splitlines splits at U+2028 too: none is raw
    arguments = [json.loads(line).get("arguments") for line in lines]
    assert {"content": "비밀번호는 [masked]\u2028pw=[masked]"} in arguments
    assert proc.stderr is not None and "chmod" not in proc.stderr.read().decode()


def test_an_existing_data_folder_others_can_read_gets_one_warning_naming_the_chmod(tmp_path: Path) -> None:
    data, audit, tools = tmp_path / "old data", tmp_path / "tool-calls.jsonl", tmp_path / "tools"
    tools.mkdir()
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    store = data / "truloop.sqlite3"
    store.touch()
    store.chmod(0o644)
    audit.touch()
    audit.chmod(0o644)
    proc = start(data, audit, tools, umask=0o022)
    try:
        send(proc, INIT, INITIALIZED, call(2, "get_day_of_week", {"date": "2026-03-10"}))
        assert proc.stdout is not None
        read_until(proc.stdout, '"id":2', timeout=30)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=20)
    assert proc.stderr is not None
    warnings = [line for line in proc.stderr.read().decode().splitlines() if "chmod" in line]
    assert len(warnings) == 1, warnings
    assert "WARNING" in warnings[0]
    assert f"chmod 700 '{data}'" in warnings[0]
    assert f"chmod 600 '{store}' {audit}" in warnings[0]
    assert data.stat().st_mode & 0o777 == 0o755  # the operator's folder is told about, not changed


def test_the_helpers_create_private_folders_and_files_and_leave_existing_ones_alone(tmp_path: Path) -> None:
    from toolsets.infra.private_files import loose_modes, private_dir, private_file, write_private

    old = os.umask(0)
    try:
        nested = private_dir(tmp_path / "a" / "b" / "c")
        write_private(nested / "state.json", "{}")
        private_file(tmp_path / "x" / "store.db")
        (tmp_path / "shared").mkdir(mode=0o755)
        private_dir(tmp_path / "shared")
    finally:
        os.umask(old)
    assert [(tmp_path / p).stat().st_mode & 0o777 for p in ("a", "a/b", "a/b/c", "x")] == [0o700] * 4
    assert (nested / "state.json").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "x" / "store.db").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o755
    assert loose_modes(tmp_path / "a") == []
    assert loose_modes(tmp_path / "shared") == [f"chmod 700 {tmp_path / 'shared'}"]
