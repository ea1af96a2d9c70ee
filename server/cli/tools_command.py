"""`truloop-mcp tools list|check FILE`: the plugins of a tools folder, checked without serving them.

    truloop-mcp tools list [--tools-dir DIR] [--json]   loaded plugins, their versions (content hashes), whether
                                                         each is the stable file or a candidate (`NAME.canary.py`)
                                                         and load errors; exit 0 (2 without a tools folder)
    truloop-mcp tools list --all [--tools-dir DIR] [--json]
                                                         every tool of each profile (member, notification-safe,
                                                         guest): built-in and plugins
    truloop-mcp tools check FILE [--tools-dir DIR]       validate one plugin file: exit 0 when it would be
                                                         served, 1 with the reason when not
    truloop-mcp tools feedback NAME [--limit N] [--json] what went wrong with a tool's versions (failed calls,
                                                         canary holds and rollbacks), newest first, from the store

Both import the files to read TOOL_SPEC, never in this process (a child process; inside the plugin sandbox when
the settings ask for it, as `--tool-authoring` always does) and never call `create` or `run`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import anyio

from server.cli.shared import PROG, OneLineParser, add_setting_flags, configure_logging, settings_or_exit

if TYPE_CHECKING:
    from server.settings import Settings

CHECK_FAILED = 1
# what decides how the folder is read: where it is, and where its code may run (the sandbox with authoring)
FOLDER_SETTINGS = {"tools_dir", "data_dir", "log_level", "plugin_isolation", "plugin_network", "tool_authoring"}


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=f"{PROG} tools", description="Custom tool plugins (see docs/plugins.md).")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    listing = commands.add_parser("list", help="loaded plugins, versions (content hashes) and load errors")
    add_setting_flags(listing, only=FOLDER_SETTINGS)
    listing.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    listing.add_argument("--all", action="store_true", help="every tool of each profile, built-in and plugins")
    check = commands.add_parser("check", help="validate a plugin file without serving it (exit 1 with the reason)")
    check.add_argument("file", type=Path, metavar="FILE")
    add_setting_flags(check, only=FOLDER_SETTINGS)
    feedback = commands.add_parser("feedback", help="a tool's failed calls and canary holds and rollbacks")
    feedback.add_argument("name", metavar="NAME")
    feedback.add_argument("--limit", type=int, default=20, help="entries, newest first (default 20)")
    feedback.add_argument("--json", action="store_true", help="one JSON object instead of text")
    add_setting_flags(feedback, only={"data_dir", "database_url", "log_level"})
    return parser


def run(argv: Sequence[str]) -> None:
    args = vars(build_parser().parse_args(list(argv)))
    command, as_json, file = args.pop("command"), args.pop("json", False), args.pop("file", None)
    every = args.pop("all", False)
    name, limit = args.pop("name", None), args.pop("limit", 20)
    settings = settings_or_exit(args)
    configure_logging("ERROR" if settings.log_level == "WARNING" else settings.log_level)  # errors are our output
    if command == "feedback":
        from server.cli.tool_feedback_view import show_feedback

        sys.stdout.write(show_feedback(settings, name, limit, as_json))
        return
    if every:
        _list_all(settings, as_json)
        return
    if command == "list":
        if settings.tools_dir is None:
            _fail("tools list: no tools folder: pass --tools-dir DIR or set TRULOOP_TOOLS_DIR", 2)
        report = anyio.run(_list, settings)
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n" if as_json else _table(report))
        return
    if not file.is_file():
        _fail(f"tools check: {file}: no such file", CHECK_FAILED)
    sys.stdout.write(anyio.run(_check, file, settings) + "\n")


def _list_all(settings: Settings, as_json: bool) -> None:
    """`tools list --all`: the built-in tools and the plugins, per profile (server/cli/tools_catalog.py)."""
    from server.cli.tools_catalog import as_table, every_tool
    from server.runtime.plugin_catalog import plugin_catalog

    report = anyio.run(every_tool, plugin_catalog(settings) if settings.tools_dir is not None else None)
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n" if as_json else as_table(report))


async def _list(settings: Settings) -> dict[str, Any]:
    from server.runtime.plugin_catalog import plugin_catalog

    catalog = plugin_catalog(settings)
    async with catalog.running(watch=False, create=False):
        rows = catalog.describe()
    plugins = [row for row in rows if "name" in row]
    errors = [
        {"file": row["file"], "version": row.get("failed_version"), "error": row["error"]}
        for row in rows
        if "error" in row
    ]
    for row in plugins:
        row.pop("error", None)
        row.pop("failed_version", None)
    return {"tools_dir": str(settings.tools_dir), "plugins": plugins, "errors": errors}


async def _check(file: Path, settings: Settings) -> str:
    from server.runtime.plugin_catalog import plugin_catalog
    from toolsets.extensions.plugins.module import PluginImportError
    from toolsets.extensions.plugins.plugin_runner import PluginLoadError
    from toolsets.extensions.plugins.source import PluginSourceError
    from toolsets.extensions.plugins.spec_common import PluginSpecError

    catalog = plugin_catalog(settings)
    reason: str | None = None
    async with catalog.running(watch=False, create=False):
        try:
            version = await catalog.check(file)
        except (PluginSourceError, PluginImportError, PluginSpecError, PluginLoadError, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__
        else:
            await version.retire()
    if reason is not None:  # outside the task group: SystemExit must not travel through it
        _fail(f"tools check: {file}: {reason}", CHECK_FAILED)
    spec = version.spec
    what = _shown({"kind": spec.kind, "name": spec.name, "uri": spec.key}) if spec.kind != "tool" else repr(spec.name)
    kind = "tool " if spec.kind == "tool" else ""
    return f"{file}: ok: {kind}{what}, version {version.version} (profiles: {', '.join(spec.profiles)})"


def _shown(row: dict[str, Any]) -> str:
    """A tool by its name; a resource (`resource notes://today`) or a prompt (`prompt greet`) by kind and address."""
    kind = row.get("kind", "tool")
    if kind == "resource":
        return f"resource {row.get('uri') or row['name']}"
    if kind == "prompt":
        return f"prompt {row['name']}"
    return str(row["name"])


def _table(report: dict[str, Any]) -> str:
    lines = [f"plugins in {report['tools_dir']}:"]
    plugins = report["plugins"]
    if not plugins and report["errors"]:  # a broken edit: a running server still serves what loaded before it
        lines.append("  (none loads as the files stand; a running server keeps serving the last version that loaded)")
    elif not plugins:
        lines.append("  (none)")
    shown = [_shown(row) for row in plugins]
    width = max([len(name) for name in shown] + [4])
    for row, name in zip(plugins, shown, strict=True):
        label = f" (version label {row['label']})" if row.get("label") else ""
        route = "candidate (canary)" if row.get("candidate") else "stable"
        lines.append(
            f"  {name:<{width}}  {route:<18}  {row['version']}  {row['file']}  profiles: "
            f"{', '.join(row['profiles'])}  timeout {row['timeout_s']:g} s{label}  sha256 {row['sha256']}"
        )
    if report["errors"]:
        lines.append("load errors:")
        for error in report["errors"]:
            lines.append(f"  {error['file']} (version {error['version'] or '-'}): {error['error']}")
    return "\n".join(lines) + "\n"


def _fail(message: str, status: int) -> NoReturn:
    sys.stderr.write(f"{PROG}: {message}\n")
    raise SystemExit(status)
