"""`truloop-mcp install|uninstall` for the hosts whose files are not plain JSON: Zed and Gemini CLI (JSON with
comments, edited in the text) and Codex (TOML, edited with tomlkit). Comments and other entries survive an
install and an uninstall; a file that cannot be read is refused and left as it was; Codex's entry, read back
with tomllib, starts the server, which answers initialize and a tool call over stdio.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from server.cli.jsonc_text import parse
from tests.e2e.test_install_command import scratch_env, truloop
from tests.support import TRULOOP

ZED_SETTINGS = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16, // bigger
  "context_servers": {
    "memory": { "source": "custom", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
  },
  "languages": { "Python": { "tab_size": 4 } },
}
"""

CODEX_CONFIG = """# Codex, by hand
model = "gpt-5-codex"  # the one I use

[mcp_servers.memory]
# the memory server, from npm
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]

[profiles.fast]
model = "o4-mini"
"""


def test_zed_settings_keep_their_comments_through_install_and_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    file = home / ".config" / "zed" / "settings.json"
    file.parent.mkdir(parents=True)
    file.write_text(ZED_SETTINGS)

    done = truloop(home, "install", "zed", "--demo", "--env", "TRULOOP_CONFIRM=strict")
    assert done.returncode == 0, done.stderr
    text = file.read_text()
    assert text.startswith(ZED_SETTINGS[: ZED_SETTINGS.index('  "context_servers"')])  # header and comments kept
    assert "// bigger" in text and '"tab_size": 4' in text
    servers = parse(text).value["context_servers"]
    assert servers["truloop"] == {
        "source": "custom",
        "command": TRULOOP,
        "args": ["--demo"],
        "env": {"TRULOOP_CONFIRM": "strict"},
    }
    assert servers["memory"]["command"] == "npx"
    assert Path(f"{file}.bak").read_text() == ZED_SETTINGS

    again = truloop(home, "install", "zed", "--demo", "--env", "TRULOOP_CONFIRM=strict")
    assert again.returncode == 0 and "nothing changed" in again.stdout and file.read_text() == text

    removed = truloop(home, "uninstall", "zed")
    assert removed.returncode == 0, removed.stderr
    assert file.read_text() == ZED_SETTINGS  # byte for byte


def test_gemini_workspace_settings_keep_their_comments(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    file = project / ".gemini" / "settings.json"
    file.parent.mkdir(parents=True)
    original = '{\n  // the project\'s model\n  "model": {"name": "gemini-2.5-pro"}\n}\n'
    file.write_text(original)
    done = truloop(home, "install", "gemini", "--scope", "workspace", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    written = parse(file.read_text()).value
    assert written == {"model": {"name": "gemini-2.5-pro"}, "mcpServers": {"truloop": {"command": TRULOOP, "args": []}}}
    assert "// the project's model" in file.read_text()
    assert truloop(home, "uninstall", "gemini", "--workspace", str(project)).returncode == 0
    assert parse(file.read_text()).value == {"model": {"name": "gemini-2.5-pro"}, "mcpServers": {}}
    assert "// the project's model" in file.read_text()


def test_a_settings_file_that_is_not_jsonc_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "home"
    file = home / ".gemini" / "settings.json"
    file.parent.mkdir(parents=True)
    for text, said in (
        ('{\n  "mcpServers": {\n    "a": /* not closed\n}', "line 3, column 10: a /* comment is not closed"),
        ('{"mcpServers": []}', "'mcpServers' is not an object"),
        ("[]", "holds a JSON list"),
    ):
        file.write_text(text)
        for command in ("install", "uninstall"):
            done = truloop(home, command, "gemini")
            assert done.returncode == 2 and said in done.stderr, (text, done.stderr)
            assert "nothing was changed" in done.stderr and len(done.stderr.strip().splitlines()) == 1
            assert file.read_text() == text and not Path(f"{file}.bak").exists()


def test_codex_toml_keeps_comments_and_other_tables_through_install_and_uninstall(tmp_path: Path) -> None:
    home, codex_home = tmp_path / "home", tmp_path / "codex"
    home.mkdir()
    codex_home.mkdir()
    file = codex_home / "config.toml"
    file.write_text(CODEX_CONFIG)
    env = {"CODEX_HOME": str(codex_home)}

    done = truloop(home, "install", "codex", "--profile", "guest", "--env", "A=b=c", extra_env=env)
    assert done.returncode == 0 and f"added 'truloop' to {file}" in done.stdout, done.stderr
    text = file.read_text()
    config = tomllib.loads(text)
    assert config["mcp_servers"]["truloop"] == {"command": TRULOOP, "args": ["--profile", "guest"], "env": {"A": "b=c"}}
    assert config["mcp_servers"]["memory"]["command"] == "npx" and config["profiles"]["fast"]["model"] == "o4-mini"
    for comment in ("# Codex, by hand", "# the one I use", "# the memory server, from npm"):
        assert comment in text
    assert Path(f"{file}.bak").read_text() == CODEX_CONFIG
    assert not (home / ".codex").exists()  # CODEX_HOME decides

    again = truloop(home, "install", "codex", "--profile", "guest", "--env", "A=b=c", extra_env=env)
    assert again.returncode == 0 and "nothing changed" in again.stdout and file.read_text() == text
    replaced = truloop(home, "install", "codex", extra_env=env)
    assert replaced.returncode == 0 and "replaced 'truloop'" in replaced.stdout
    assert tomllib.loads(file.read_text())["mcp_servers"]["truloop"] == {"command": TRULOOP, "args": []}

    removed = truloop(home, "uninstall", "codex", extra_env=env)
    assert removed.returncode == 0 and f"removed 'truloop' from {file}" in removed.stdout
    assert file.read_text() == CODEX_CONFIG  # byte for byte


def test_codex_refuses_a_file_that_is_not_toml(tmp_path: Path) -> None:
    home = tmp_path / "home"
    file = home / ".codex" / "config.toml"
    file.parent.mkdir(parents=True)
    broken = [('model = "x"\n[mcp_servers\n', "is not valid TOML (line 2"), ("mcp_servers = 3\n", "not a table")]
    for text, said in broken:
        file.write_text(text)
        for command in ("install", "uninstall"):
            done = truloop(home, command, "codex")
            assert done.returncode == 2 and said in done.stderr, (text, done.stderr)
            assert file.read_text() == text and not Path(f"{file}.bak").exists()


def test_codex_print_shows_the_toml_table(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = truloop(home, "install", "codex", "--print", "--user", "minji")
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout) == {"mcp_servers": {"truloop": {"command": TRULOOP, "args": ["--user", "minji"]}}}
    assert done.stdout.startswith("[mcp_servers.truloop]") and not (home / ".codex").exists()


def test_the_codex_entry_starts_the_server_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = truloop(home, "install", "codex", "--demo", "--data-dir", str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["truloop"]
    env = scratch_env(home) | entry.get("env", {})
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(tmp_path))

    async def run() -> tuple[str, str]:
        with anyio.fail_after(30):
            async with Client(params) as client:
                result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
                text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
                return client.server_info.name if client.server_info else "", text

    name, text = anyio.run(run)
    assert "truloop" in name.lower() and "Tuesday" in text
