"""Where each MCP host keeps its server list, and the shape of one stdio entry in it.

`truloop-mcp install|uninstall HOST` (server/cli/install_command.py) reads this table. Every path is derived
from the environment it is given (`HOME`, `XDG_CONFIG_HOME`, `APPDATA`, `CLAUDE_CONFIG_DIR`) and the platform,
never from the real home, so tests run in a scratch HOME and the macOS and Windows paths can be checked on
Linux. The locations are the hosts' documented ones:

| host | user scope | workspace scope | key |
|---|---|---|---|
| claude-desktop | `<config dir>/Claude/claude_desktop_config.json` | (none) | `mcpServers` |
| claude-code | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`) | `<dir>/.mcp.json` | `mcpServers` |
| cursor | `~/.cursor/mcp.json` | `<dir>/.cursor/mcp.json` | `mcpServers` |
| vscode | `<config dir>/Code/User/mcp.json` | `<dir>/.vscode/mcp.json` | `servers` |

`<config dir>` is `~/Library/Application Support` on macOS, `%APPDATA%` on Windows and `$XDG_CONFIG_HOME`
(`~/.config`) elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Scope = Literal["user", "workspace"]
SERVER_NAME = "truloop"  # the entry's name in every host's list


@dataclass(frozen=True, slots=True)
class Host:
    name: str  # as typed after `truloop-mcp install`
    title: str  # as the host calls itself
    key: str  # the top-level object that maps server names to entries
    user_file: Callable[[Path, Mapping[str, str], str], Path]  # (home, environment, platform) -> file
    workspace_file: str | None  # relative to the workspace folder; None: the host has no workspace scope
    typed: bool  # the entry carries "type": "stdio"
    next_step: str  # what to do after installing, as one line

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
        entry: dict[str, Any] = {"type": "stdio"} if self.typed else {}
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


HOSTS: dict[str, Host] = {
    host.name: host
    for host in (
        Host(
            "claude-desktop",
            "Claude Desktop",
            "mcpServers",
            _claude_desktop,
            None,
            typed=False,
            next_step="Quit Claude Desktop completely and start it again; Settings, Developer shows the server.",
        ),
        Host(
            "claude-code",
            "Claude Code",
            "mcpServers",
            _claude_code,
            ".mcp.json",
            typed=True,
            next_step="Start a new `claude` session; `/mcp` lists the server and its tools.",
        ),
        Host(
            "cursor",
            "Cursor",
            "mcpServers",
            _cursor,
            ".cursor/mcp.json",
            typed=False,
            next_step="Cursor Settings, MCP (or Tools & MCP): the server is listed there; switch it on if it is off.",
        ),
        Host(
            "vscode",
            "VS Code",
            "servers",
            _vscode,
            ".vscode/mcp.json",
            typed=True,
            next_step="Command palette, 'MCP: List Servers': start truloop; its tools are in the chat's tool picker.",
        ),
    )
}
