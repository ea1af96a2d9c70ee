"""The `truloop-mcp` subcommands, one row each: `main` dispatches from this table and `truloop-mcp --help`
lists it. A new subcommand is a module under server/cli/ whose `run(argv)` takes the arguments after its
name, plus one row here. Rows name their module rather than import it: only the subcommand that runs is
loaded, which keeps the server's start fast."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from server.cli.shared import PROG


@dataclass(frozen=True, slots=True)
class Subcommand:
    name: str
    module: str  # under server.cli
    usage: tuple[tuple[str, str], ...]  # its --help lines: (what follows `truloop-mcp`, what it does)


SUBCOMMANDS = (
    Subcommand(
        "users", "users_command", (("users import FILE", "import users from a JSON list or a CSV file with a header"),)
    ),
    Subcommand(
        "notion",
        "notion_command",
        (("notion sync", "copy the pages shared with NOTION_TOKEN's integration into <docs>/notion/"),),
    ),
    Subcommand(
        "db",
        "db_command",
        (
            ("db migrate|status", "the store's schema (--database-url or SQLite)"),
            ("db copy --from sqlite:PATH --to postgresql://...", "move an embedded store onto PostgreSQL"),
        ),
    ),
    Subcommand(
        "tools",
        "tools_command",
        (
            ("tools list", "the --tools-dir plugins: versions, load errors"),
            ("tools list --all [--json]", "every tool of each profile, built-in and plugins"),
            ("tools check FILE", "validate a plugin file without serving it"),
            ("tools feedback NAME [--json]", "a tool's failed calls and canary holds and rollbacks"),
        ),
    ),
    Subcommand(
        "call",
        "call_command",
        (("call", "answer tool calls (LangChain, OpenAI, Anthropic shapes) read from stdin, one JSON a line"),),
    ),
    Subcommand(
        "audit",
        "audit_command",
        (("audit tail|grep", "read the audit log of tool calls, with filters by user, tool, status and time"),),
    ),
    Subcommand(
        "token",
        "token_command",
        (
            (
                "token --user ID [--role R] [--groups G] [--ttl 1h]",
                "mint a bearer token for TRULOOP_JWT_SECRET (prints only the token)",
            ),
        ),
    ),
    Subcommand(
        "schedules",
        "schedules_command",
        (("schedules list|cancel [ID]", "every user's scheduled tool runs; cancel one for good"),),
    ),
    Subcommand(
        "canary",
        "canary_command",
        (("canary status|promote|hold|rollback NAME", "canary rollouts of plugin tools (NAME.canary.py)"),),
    ),
    Subcommand(
        "install",
        "install_command",
        (
            (
                "install HOST [--scope user|workspace] [--print] [-- FLAGS]",
                "add this server to a host: claude-desktop, claude-code, cursor, vscode, windsurf, zed, gemini, codex",
            ),
        ),
    ),
    Subcommand(
        "dev",
        "dev_command",
        (
            (
                "dev [--print] [SERVER FLAGS]",
                "this server under the MCP Inspector's web UI (npx; Node.js 20+), e.g. dev --demo",
            ),
        ),
    ),
    Subcommand(
        "apps",
        "apps_command",
        (
            (
                "apps preview --out DIR [--app A] [--locale ko|en] [--theme light|dark]",
                "each MCP App as a standalone HTML page with sample data, for a browser",
            ),
        ),
    ),
    Subcommand(
        "uninstall",
        "uninstall_command",
        (("uninstall HOST [--scope user|workspace]", "take it out of that host's file again (the rest stays)"),),
    ),
)
SERVE = "serve_command"  # no subcommand named: the arguments are the server's flags

HELP_WIDTH = 80
SUMMARY_COLUMN = 33
OPTIONS_HINT = f"  (`{PROG} users --help`, `{PROG} notion --help` for their options)"


def command_for(argv: Sequence[str]) -> tuple[str, list[str]]:
    """The module that runs this command line, and the arguments it is given. A first word that is neither a
    subcommand nor a flag ends the program with one line naming the closest subcommand (the server takes no words)."""
    for command in SUBCOMMANDS:
        if argv and argv[0] == command.name:
            return f"server.cli.{command.module}", list(argv[1:])
    if argv and argv[0] and not argv[0].startswith("-"):
        from server.cli.shared import fail

        fail(unknown_command(argv[0]))
    return f"server.cli.{SERVE}", list(argv)


def unknown_command(word: str) -> str:
    import difflib

    names = [command.name for command in SUBCOMMANDS]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    if close:
        return f"unknown command {word!r}; did you mean {close[0]!r}? (see --help)"
    return f"unknown command {word!r}; the commands are {', '.join(names)} (see --help)"


def subcommands_help() -> str:
    """The subcommands section of `truloop-mcp --help`."""
    lines = ["subcommands (run instead of the server):"]
    indent = " " * SUMMARY_COLUMN
    for command in SUBCOMMANDS:
        for arguments, summary in command.usage:
            head = f"  {PROG} {arguments}"
            wrapped = textwrap.wrap(summary, width=HELP_WIDTH, initial_indent=indent, subsequent_indent=indent)
            if len(head) + 2 <= SUMMARY_COLUMN:
                wrapped[0] = head.ljust(SUMMARY_COLUMN) + wrapped[0][SUMMARY_COLUMN:]
            else:
                lines.append(head)
            lines += wrapped
    return "\n".join([*lines, OPTIONS_HINT]) + "\n"
