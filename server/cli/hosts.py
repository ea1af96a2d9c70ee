"""Where each MCP host keeps its server list, in which format, and the shape of one stdio entry in it.

`truloop-mcp install|uninstall HOST` (server/cli/install_command.py) reads this table. Every path is derived
from the environment it is given (`HOME`, `XDG_CONFIG_HOME`, `APPDATA`, `CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`,
`CODEX_HOME`) and the platform, never from the real home, so tests run in a scratch HOME and the macOS and
Windows paths can be checked on Linux. The locations are the hosts' documented ones:

| host | user scope | workspace scope | key | format |
|---|---|---|---|---|
| claude-desktop | `<config dir>/Claude/claude_desktop_config.json` | (none) | `mcpServers` | JSON |
| claude-code | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`) | `<dir>/.mcp.json` | `mcpServers` | JSON |
| cursor | `~/.cursor/mcp.json` | `<dir>/.cursor/mcp.json` | `mcpServers` | JSON |
| vscode | `<config dir>/Code/User/mcp.json` | `<dir>/.vscode/mcp.json` | `servers` | JSON |
| windsurf | `~/.codeium/windsurf/mcp_config.json` | (none) | `mcpServers` | JSON |
| zed | `<zed dir>/settings.json` | `<dir>/.zed/settings.json` | `context_servers` | JSONC |
| gemini | `<gemini home>/.gemini/settings.json` | `<dir>/.gemini/settings.json` | `mcpServers` | JSONC |
| codex | `~/.codex/config.toml` (`$CODEX_HOME/config.toml`) | `<dir>/.codex/config.toml` | `mcp_servers` | TOML |

`<config dir>` is `~/Library/Application Support` on macOS, `%APPDATA%` on Windows and `$XDG_CONFIG_HOME`
(`~/.config`) elsewhere. `<zed dir>` is `~/.config/zed` on macOS, `%APPDATA%\\Zed` on Windows and
`<config dir>/zed` elsewhere. `<gemini home>` is `$GEMINI_CLI_HOME`, else the home folder. JSONC is JSON with
comments (and, for Zed, trailing commas): the entry is edited in the text, so the rest of the file, comments
included, stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Scope = Literal["user", "workspace"]
Form = Literal["json", "jsonc", "toml"]  # jsonc: JSON whose comments and trailing commas are kept as they are
SERVER_NAME = "truloop"  # the entry's name in every host's list


@dataclass(frozen=True, slots=True)
class Host:
    name: str  # as typed after `truloop-mcp install`
    title: str  # as the host calls itself
    key: str  # the top-level object that maps server names to entries
    user_file: Callable[[Path, Mapping[str, str], str], Path]  # (home, environment, platform) -> file
    workspace_file: str | None  # relative to the workspace folder; None: the host has no workspace scope
    tag: tuple[str, str] | None  # a field the entry starts with: ("type", "stdio") for some hosts
    next_step: str  # what to do after installing, as one line
    form: Form = "json"

    @property
    def scopes(self) -> tuple[Scope, ...]:
        return ("user", "workspace") if self.workspace_file is not None else ("user",)

    def config_file(
        self, scope: Scope, *, env: Mapping[str, str], platform: str, workspace: Path | None = None
    ) -> Path:
        """The file this host reads for `scope` (`workspace`: the folder of a workspace-scope file)."""
        if scope == "workspace":
            if self.workspace_file is None:
                raise ValueError(f"{self.name} has no workspace scope (only {', '.join(self.scopes)})")
            if workspace is None:
                raise ValueError("a workspace-scope file needs the workspace folder")
            return workspace / self.workspace_file
        return self.user_file(home_of(env), env, platform)

    def entry(self, command: str, args: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
        """One stdio entry as this host reads it."""
        entry: dict[str, Any] = dict([self.tag]) if self.tag else {}
        entry.update(command=command, args=list(args))
        if env:
            entry["env"] = dict(env)
        return entry


def home_of(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or env.get("USERPROFILE")
    return Path(home) if home else Path.home()


def app_config_dir(home: Path, env: Mapping[str, str], platform: str) -> Path:
    """Where desktop applications keep their settings on this platform."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        appdata = env.get("APPDATA")
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = env.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else home / ".config"


def _claude_desktop(home: Path, env: Mapping[str, str], platform: str) -> Path:
    return app_config_dir(home, env, platform) / "Claude" / "claude_desktop_config.json"


def _claude_code(home: Path, env: Mapping[str, str], platform: str) -> Path:
    config_dir = env.get("CLAUDE_CONFIG_DIR")  # Claude Code's own override of its configuration folder
    return Path(config_dir) / ".claude.json" if config_dir else home / ".claude.json"


def _cursor(home: Path, env: Mapping[str, str], platform: str) -> Path:
    return home / ".cursor" / "mcp.json"


def _vscode(home: Path, env: Mapping[str, str], platform: str) -> Path:
    return app_config_dir(home, env, platform) / "Code" / "User" / "mcp.json"


def _windsurf(home: Path, env: Mapping[str, str], platform: str) -> Path:
    return home / ".codeium" / "windsurf" / "mcp_config.json"  # the same on every platform


def _zed(home: Path, env: Mapping[str, str], platform: str) -> Path:
    if platform == "darwin":  # Zed keeps ~/.config/zed on macOS, not Application Support
        return home / ".config" / "zed" / "settings.json"
    if platform == "win32":
        return app_config_dir(home, env, platform) / "Zed" / "settings.json"
    flatpak = env.get("FLATPAK_XDG_CONFIG_HOME")  # what Zed reads first when it runs as a Flatpak
    return (Path(flatpak) if flatpak else app_config_dir(home, env, platform)) / "zed" / "settings.json"


def _gemini(home: Path, env: Mapping[str, str], platform: str) -> Path:
    override = env.get("GEMINI_CLI_HOME")  # Gemini CLI's own replacement for the home folder
    return (Path(override) if override else home) / ".gemini" / "settings.json"


def _codex(home: Path, env: Mapping[str, str], platform: str) -> Path:
    codex_home = env.get("CODEX_HOME")  # Codex's own override of its folder
    return Path(codex_home) / "config.toml" if codex_home else home / ".codex" / "config.toml"


HOST_ALIASES = {"gemini": "gemini-cli", "codex-cli": "codex"}  # the other names people use, taken as well

HOSTS: dict[str, Host] = {
    host.name: host
    for host in (
        Host(
            "claude-desktop",
            "Claude Desktop",
            "mcpServers",
            _claude_desktop,
            None,
            tag=None,
            next_step="Quit Claude Desktop completely and start it again; Settings, Developer shows the server.",
        ),
        Host(
            "claude-code",
            "Claude Code",
            "mcpServers",
            _claude_code,
            ".mcp.json",
            tag=("type", "stdio"),
            next_step="Start a new `claude` session; `/mcp` lists the server and its tools.",
        ),
        Host(
            "cursor",
            "Cursor",
            "mcpServers",
            _cursor,
            ".cursor/mcp.json",
            tag=None,
            next_step="Cursor Settings, MCP (or Tools & MCP): the server is listed there; switch it on if it is off.",
        ),
        Host(
            "vscode",
            "VS Code",
            "servers",
            _vscode,
            ".vscode/mcp.json",
            tag=("type", "stdio"),
            next_step="Command palette, 'MCP: List Servers': start truloop; its tools are in the chat's tool picker.",
        ),
        Host(
            "windsurf",
            "Windsurf",
            "mcpServers",
            _windsurf,
            None,
            tag=None,
            next_step="Cascade's MCP servers panel (the hammer icon, or Windsurf Settings, Cascade): press Refresh.",
        ),
        Host(
            "zed",
            "Zed",
            "context_servers",
            _zed,
            ".zed/settings.json",
            tag=("source", "custom"),
            next_step="Zed reloads its settings: the Agent Panel's settings list truloop, a green dot once it runs.",
            form="jsonc",
        ),
        Host(
            "gemini-cli",
            "Gemini CLI",
            "mcpServers",
            _gemini,
            ".gemini/settings.json",
            tag=None,
            next_step="Start `gemini`; `/mcp` lists truloop and its tools (`gemini mcp list` from a shell).",
            form="jsonc",
        ),
        Host(
            "codex",
            "Codex",
            "mcp_servers",
            _codex,
            ".codex/config.toml",
            tag=None,
            next_step="Start a new `codex` session: `/mcp` lists truloop and its tools (`codex mcp list` in a shell).",
            form="toml",
        ),
    )
}
