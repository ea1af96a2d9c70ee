"""`truloop-mcp install|uninstall HOST`: the real command in a scratch HOME, writing each host's real file.

Every run gets an environment of its own (HOME, XDG_CONFIG_HOME under the test's folder; no APPDATA or
CLAUDE_CONFIG_DIR), so nothing outside the test's folder is read or written.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from server.cli.hosts import HOSTS
from tests.support import TRULOOP, child_env

RUN_TIMEOUT = 60

# (host, scope) -> the file it writes, relative to HOME (user scope) or to the workspace folder
FILES = {
    ("claude-desktop", "user"): ".config/Claude/claude_desktop_config.json",
    ("claude-code", "user"): ".claude.json",
    ("claude-code", "workspace"): ".mcp.json",
    ("cursor", "user"): ".cursor/mcp.json",
    ("cursor", "workspace"): ".cursor/mcp.json",
    ("vscode", "user"): ".config/Code/User/mcp.json",
    ("vscode", "workspace"): ".vscode/mcp.json",
    ("windsurf", "user"): ".codeium/windsurf/mcp_config.json",
    ("zed", "user"): ".config/zed/settings.json",
    ("zed", "workspace"): ".zed/settings.json",
    ("gemini-cli", "user"): ".gemini/settings.json",
    ("gemini-cli", "workspace"): ".gemini/settings.json",
}
KEYS = {
    "claude-desktop": "mcpServers",
    "claude-code": "mcpServers",
    "cursor": "mcpServers",
    "vscode": "servers",
    "windsurf": "mcpServers",
    "zed": "context_servers",
    "gemini-cli": "mcpServers",
}
JSON_HOSTS = [name for name, host in HOSTS.items() if host.form != "toml"]  # codex: tests/e2e/test_install_toml.py
OTHER = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}


def scratch_env(home: Path) -> dict[str, str]:
    env = child_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    for name in (
        "APPDATA",
        "CLAUDE_CONFIG_DIR",
        "USERPROFILE",
        "GEMINI_CLI_HOME",
        "CODEX_HOME",
        "FLATPAK_XDG_CONFIG_HOME",
    ):
        env.pop(name, None)
    return env


def truloop(
    home: Path, *args: str, cwd: Path | None = None, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRULOOP, *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=scratch_env(home) | (extra_env or {}),
        cwd=cwd or home,
    )


def config_file(home: Path, workspace: Path, host: str, scope: str) -> Path:
    return (home if scope == "user" else workspace) / FILES[host, scope]


def scope_args(scope: str, workspace: Path) -> list[str]:
    return [] if scope == "user" else ["--scope", "workspace", "--workspace", str(workspace)]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


@pytest.mark.parametrize(("host", "scope"), list(FILES))
def test_install_merges_once_backs_up_and_uninstall_removes_only_ours(
    host: str, scope: str, home: Path, workspace: Path, tmp_path: Path
) -> None:
    file = config_file(home, workspace, host, scope)
    file.parent.mkdir(parents=True, exist_ok=True)
    key = KEYS[host]
    original = {"theme": "dark", "projects": {"/x": {"allowedTools": []}}, key: {"memory": OTHER}}
    file.write_text(json.dumps(original, indent=4))
    os.chmod(file, 0o600)

    data = tmp_path / "data"
    done = truloop(home, "install", host, *scope_args(scope, workspace), "--profile", "guest", "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    assert f"added 'truloop' to {file}" in done.stdout and f"{file}.bak" in done.stdout
    written = json.loads(file.read_text())
    entry = written[key]["truloop"]
    assert entry["command"] == TRULOOP and os.path.isabs(entry["command"])
    assert entry["args"] == ["--profile", "guest", "--data-dir", str(data)]
    assert ("type" in entry) == (host in ("claude-code", "vscode"))
    if "type" in entry:
        assert entry["type"] == "stdio"
    assert entry.get("source") == ("custom" if host == "zed" else None)  # Zed's custom (not extension) server
    assert written[key]["memory"] == OTHER  # another server survives
    assert written["theme"] == "dark" and written["projects"] == original["projects"]  # other keys too
    assert json.loads(Path(f"{file}.bak").read_text()) == original  # the previous file, as it was
    assert stat.S_IMODE(file.stat().st_mode) == 0o600  # its permissions kept

    again = truloop(home, "install", host, *scope_args(scope, workspace), "--profile", "guest", "--data-dir", str(data))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert json.loads(file.read_text()) == written  # one entry, unchanged

    changed = truloop(home, "install", host, *scope_args(scope, workspace))  # other flags: the entry is replaced
    assert changed.returncode == 0 and "replaced 'truloop'" in changed.stdout
    replaced = json.loads(file.read_text())
    assert list(replaced[key]) == ["memory", "truloop"] and replaced[key]["truloop"]["args"] == []

    removed = truloop(home, "uninstall", host, *scope_args(scope, workspace))
    assert removed.returncode == 0 and f"removed 'truloop' from {file}" in removed.stdout
    assert json.loads(file.read_text()) == original  # only ours went

    twice = truloop(home, "uninstall", host, *scope_args(scope, workspace))
    assert twice.returncode == 0 and "no 'truloop' entry" in twice.stdout


@pytest.mark.parametrize("host", JSON_HOSTS)
def test_install_into_a_fresh_home_creates_the_file(host: str, home: Path, workspace: Path) -> None:
    done = truloop(home, "install", host)
    assert done.returncode == 0, done.stderr
    file = config_file(home, workspace, host, "user")
    assert "(a new file)" in done.stdout and HOSTS[host].next_step in done.stdout
    assert json.loads(file.read_text()) == {KEYS[host]: {"truloop": HOSTS[host].entry(TRULOOP, [], {})}}
    assert not Path(f"{file}.bak").exists()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600  # a user file is private


def test_workspace_scope_defaults_to_the_current_folder(home: Path, workspace: Path) -> None:
    done = truloop(home, "install", "vscode", "--scope", "workspace", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert json.loads((workspace / ".vscode" / "mcp.json").read_text())["servers"]["truloop"]["type"] == "stdio"
    assert not (home / ".config").exists()
    implied = truloop(home, "install", "cursor", "--workspace", str(workspace))  # --workspace implies the scope
    assert implied.returncode == 0 and (workspace / ".cursor" / "mcp.json").is_file()


@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": {"memory": {"command": "npx"}},}',  # a trailing comma
        '{\n  // a comment, as VS Code allows\n  "servers": {}\n}',
        "[]",
        '{"mcpServers": []}',
    ],
)
def test_a_file_that_is_not_plain_json_is_refused_and_left_untouched(text: str, home: Path) -> None:
    file = home / ".cursor" / "mcp.json"
    file.parent.mkdir()
    file.write_text(text)
    if "servers" in text and "mcpServers" not in text:
        file = home / ".config" / "Code" / "User" / "mcp.json"
        file.parent.mkdir(parents=True)
        file.write_text(text)
    host = "vscode" if file.parent.name == "User" else "cursor"
    for command in ("install", "uninstall"):
        done = truloop(home, command, host)
        assert done.returncode == 2, done
        assert done.stderr.startswith("truloop-mcp: error: ") and str(file) in done.stderr
        assert "nothing was changed" in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert file.read_text() == text
        assert not Path(f"{file}.bak").exists()


def test_print_shows_the_entry_and_writes_nothing(home: Path) -> None:
    done = truloop(home, "install", "claude-code", "--print", "--user", "minji", "--demo", "--env", "A=b=c")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown == {
        "mcpServers": {
            "truloop": {"type": "stdio", "command": TRULOOP, "args": ["--user", "minji", "--demo"], "env": {"A": "b=c"}}
        }
    }
    assert str(home / ".claude.json") in done.stderr
    assert not (home / ".claude.json").exists()


def test_server_flags_after_the_double_dash_are_checked_and_passed_through(home: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()  # checked as the server would check it
    server_flags = ["--tools-dir", str(tools), "--confirm", "strict"]
    done = truloop(home, "install", "cursor", "--profile", "member", "--", *server_flags)
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["truloop"]
    assert entry["args"] == ["--profile", "member", "--tools-dir", str(tools), "--confirm", "strict"]

    refused: list[tuple[list[str], str]] = [
        (["--", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--", "--confirm", "sometimes"], "confirm"),
        (["--", "--tools-dir", str(tmp_path / "missing")], "is not an existing folder"),
        (["--", "--transport", "http"], "a host starts the server on stdio"),
        (["--scope", "workspace"], "claude-desktop has no workspace scope"),
        (["--env", "NOEQUALS"], "expected KEY=VALUE"),
    ]
    for args, message in refused:
        host = "claude-desktop" if "--scope" in args else "cursor"
        before = (home / ".cursor" / "mcp.json").read_text()
        failed = truloop(home, "install", host, *args)
        assert failed.returncode == 2, (args, failed)
        assert message in failed.stderr, (args, failed.stderr)
        assert (home / ".cursor" / "mcp.json").read_text() == before
    assert not (home / ".config" / "Claude").exists()


def test_uninstall_from_a_file_that_is_not_there_creates_nothing(home: Path) -> None:
    for host in HOSTS:
        done = truloop(home, "uninstall", host)
        assert done.returncode == 0 and "(no such file); nothing changed" in done.stdout, done
    assert list(home.iterdir()) == []


def test_a_relative_data_dir_is_made_absolute(home: Path) -> None:
    done = truloop(home, "install", "claude-desktop", "--data-dir", "store")
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / ".config/Claude/claude_desktop_config.json").read_text())["mcpServers"]["truloop"]
    assert entry["args"] == ["--data-dir", str(home / "store")]


def test_help_lists_install_and_uninstall(home: Path) -> None:
    done = truloop(home, "--help")
    assert "install HOST" in done.stdout and "uninstall HOST" in done.stdout
    own = truloop(home, "install", "--help")
    listed = " ".join(own.stdout.split())
    assert own.returncode == 0
    assert "claude-desktop, claude-code, cursor, vscode, windsurf, zed, gemini-cli, codex" in listed


# -- where each host's file is, on each platform (the paths are derived from the environment given) --


@pytest.mark.parametrize(
    ("host", "platform", "env", "expected"),
    [
        ("claude-desktop", "linux", {"HOME": "/h"}, "/h/.config/Claude/claude_desktop_config.json"),
        ("claude-desktop", "linux", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude_desktop_config.json"),
        (
            "claude-desktop",
            "darwin",
            {"HOME": "/Users/m"},
            "/Users/m/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", {"HOME": "/h", "APPDATA": "/ad"}, "/ad/Claude/claude_desktop_config.json"),
        ("claude-code", "linux", {"HOME": "/h"}, "/h/.claude.json"),
        ("claude-code", "darwin", {"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}, "/c/.claude.json"),
        ("cursor", "darwin", {"HOME": "/h"}, "/h/.cursor/mcp.json"),
        ("vscode", "linux", {"HOME": "/h"}, "/h/.config/Code/User/mcp.json"),
        ("vscode", "darwin", {"HOME": "/h"}, "/h/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", {"USERPROFILE": "/u"}, "/u/AppData/Roaming/Code/User/mcp.json"),
        ("windsurf", "linux", {"HOME": "/h"}, "/h/.codeium/windsurf/mcp_config.json"),
        ("windsurf", "win32", {"USERPROFILE": "/u"}, "/u/.codeium/windsurf/mcp_config.json"),
        ("zed", "linux", {"HOME": "/h"}, "/h/.config/zed/settings.json"),
        ("zed", "linux", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/x/zed/settings.json"),
        ("zed", "linux", {"HOME": "/h", "FLATPAK_XDG_CONFIG_HOME": "/f"}, "/f/zed/settings.json"),
        ("zed", "darwin", {"HOME": "/Users/m", "XDG_CONFIG_HOME": "/x"}, "/Users/m/.config/zed/settings.json"),
        ("zed", "win32", {"HOME": "/h", "APPDATA": "/ad"}, "/ad/Zed/settings.json"),
        ("gemini-cli", "linux", {"HOME": "/h"}, "/h/.gemini/settings.json"),
        ("gemini-cli", "darwin", {"HOME": "/h", "GEMINI_CLI_HOME": "/g"}, "/g/.gemini/settings.json"),
        ("codex", "linux", {"HOME": "/h"}, "/h/.codex/config.toml"),
        ("codex", "win32", {"USERPROFILE": "/u", "CODEX_HOME": "/c"}, "/c/config.toml"),
    ],
)
def test_user_files_follow_the_platform_and_environment(
    host: str, platform: str, env: dict[str, Any], expected: str
) -> None:
    assert HOSTS[host].config_file("user", env=env, platform=platform) == Path(expected)


def test_workspace_files() -> None:
    project = Path("/p")
    files = {name: host.config_file("workspace", env={}, platform="linux", workspace=project) for name, host in
             HOSTS.items() if "workspace" in host.scopes}  # fmt: skip
    assert files == {
        "claude-code": Path("/p/.mcp.json"),
        "cursor": Path("/p/.cursor/mcp.json"),
        "vscode": Path("/p/.vscode/mcp.json"),
        "zed": Path("/p/.zed/settings.json"),
        "gemini-cli": Path("/p/.gemini/settings.json"),
        "codex": Path("/p/.codex/config.toml"),
    }
    with pytest.raises(ValueError, match="no workspace scope"):
        HOSTS["claude-desktop"].config_file("workspace", env={}, platform="linux", workspace=project)


@pytest.mark.parametrize(
    ("alias", "written"), [("gemini", ".gemini/settings.json"), ("codex-cli", ".codex/config.toml")]
)
def test_the_other_names_of_the_hosts_are_taken_too(tmp_path: Path, alias: str, written: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = truloop(home, "install", alias)
    assert done.returncode == 0, done.stderr
    assert (home / written).is_file()
    assert truloop(home, "uninstall", alias).returncode == 0
