"""`truloop-mcp tools list --all [--tools-dir DIR] [--json]`: every tool each profile publishes (member,
notification-safe, guest), the built-in ones and the tools folder's plugins, without starting a server or a
client. The profiles are composed as a stdio server composes them (full exposure, no workspace); plugins are
imported to read their specs but never started.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from toolsets.profile_names import PROFILE_NAMES

if TYPE_CHECKING:
    from toolsets.extensions.plugins.catalog import PluginCatalog

SUMMARY_WIDTH = 72  # characters of a tool's summary in the table (--json has it whole)


async def every_tool(catalog: PluginCatalog | None) -> dict[str, Any]:
    """{"tools_dir", "profiles": {profile: [{"name", "toolset", "source", "hints", "summary"}]}, "errors"}.
    `catalog`: the tools folder's plugin catalog (server/runtime/plugin_catalog.py), None without a folder."""
    from toolsets.profiles import Extensions, build_profiles

    tools_dir = catalog.config.tools_dir if catalog is not None and catalog.config is not None else None
    running = catalog.running(watch=False, create=False) if catalog is not None else contextlib.nullcontext()
    async with running:
        profiles = build_profiles(extensions=Extensions(plugins=catalog))
        listed = {name: [_row(tool) for tool in profiles[name]] for name in PROFILE_NAMES}
        rows = catalog.describe() if catalog is not None else []
    errors = [{"file": row["file"], "error": row["error"]} for row in rows if "error" in row]
    return {"tools_dir": None if tools_dir is None else str(tools_dir), "profiles": listed, "errors": errors}


def _row(tool: Any) -> dict[str, Any]:
    from toolsets.extensions.plugins.tool import PLUGINS_TOOLSET

    hints = tool.hints
    marks = [
        mark
        for mark, on in (
            ("read-only", hints.read_only),
            ("destructive", hints.destructive),
            ("idempotent", hints.idempotent),
            ("open-world", hints.open_world),
        )
        if on
    ]
    if tool.device is not None:
        marks.append("deferred")  # answered on the user's device
    return {
        "name": tool.name,
        "toolset": tool.toolset,
        "source": "plugin" if tool.toolset == PLUGINS_TOOLSET else "built-in",
        "hints": marks,
        "available": available_on(tool),
        "summary": _summary(tool.description),
    }


def available_on(tool: Any) -> str:
    """Where the tool can run: everywhere, or (a deferred tool only the user's device answers) where a device can
    reach the server."""
    from toolsets.core.deferred import device_only

    if device_only(tool):
        return DEVICE_ONLY
    if tool.device is not None:
        return "everywhere: the user's device, or the form an MCP client with elicitation shows"
    return "everywhere"


DEVICE_ONLY = (
    "HTTP (the user's device connects to it), stdio with --redis-url shared with that HTTP server, in-process "
    "(LangGraph's interrupt); not listed on plain stdio"
)


def _summary(description: str) -> str:
    """The description's first paragraph, on one line."""
    paragraph = description.strip().split("\n\n")[0]
    return " ".join(paragraph.split())


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def as_table(report: dict[str, Any]) -> str:
    lines: list[str] = []
    for profile, tools in report["profiles"].items():
        plugins = sum(tool["source"] == "plugin" for tool in tools)
        lines.append(f"{profile} ({len(tools)} tools, {plugins} from plugins):")
        width = max([len(tool["name"]) for tool in tools] + [4])
        toolset_width = max([len(tool["toolset"]) for tool in tools] + [4])
        for tool in tools:
            marks = f"  [{', '.join(tool['hints'])}]" if tool["hints"] else ""
            if tool["available"] == DEVICE_ONLY:
                marks += "  (device only: HTTP or --redis-url)"
            summary = _clip(tool["summary"], SUMMARY_WIDTH)
            lines.append(f"  {tool['name']:<{width}}  {tool['toolset']:<{toolset_width}}  {summary}{marks}")
        lines.append("")
    lines.append(
        "Device only: answered by the user's device alone, so listed where a device can reach the server: over HTTP,\n"
        "on stdio with --redis-url shared with that HTTP server, in-process; every other tool runs everywhere.\n"
        "--json gives each tool's `available`."
    )
    if report["tools_dir"] is None:
        lines.append("(no tools folder: pass --tools-dir DIR or set TRULOOP_TOOLS_DIR to list its plugins too)")
    for error in report["errors"]:
        lines.append(f"load error: {error['file']}: {error['error']}")
    return "\n".join(lines).rstrip("\n") + "\n"
