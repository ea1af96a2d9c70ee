"""Plugin files the plugin tests write into a tools folder, and the server around them."""

from __future__ import annotations

import contextlib
import os
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from server.composition import Deployment
from server.mcp_server import TruloopMCP
from tests.support import settings

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

# A plugin with a lifecycle: every create, run start/end and close is a line in events.log (its data folder).
LIFECYCLE = """
import time

TAG = {tag!r}

def _log(context, event):
    with open(context.data_dir / "events.log", "a") as log:
        log.write(f"{{event}} {{context.version}}\\n")

class Counter:
    def __init__(self, context):
        self.context = context
        _log(context, "create")

    def run(self, input_data, context):
        _log(context, "start")
        time.sleep(input_data.get("sleep", 0))
        _log(context, "end")
        return {{"tag": TAG, "version": context.version}}

    def close(self):
        _log(self.context, "close")

def create(context):
    return Counter(context)
"""


def plugin_source(name: str, body: str, **spec: Any) -> str:
    full = {"name": name, "description": f"Test plugin {name}.", "input_schema": EMPTY_SCHEMA, **spec}
    return f"TOOL_SPEC = {full!r}\n{textwrap.dedent(body)}"


def write(path: Path, text: str) -> None:
    """Write like an editor that replaces the file, and make sure its mtime moves even within one tick."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(time.time_ns(), before + 1_000_000))


def events(data_dir: Path, name: str) -> list[tuple[str, str]]:
    log = data_dir / "plugins" / name / "events.log"
    if not log.exists():
        return []
    return [tuple(line.split()) for line in log.read_text().splitlines()]  # type: ignore[misc]


@contextlib.asynccontextmanager
async def serving(tools_dir: Path, data_dir: Path, **overrides: Any) -> AsyncIterator[TruloopMCP]:
    """An in-process server with `tools_dir` loaded and watched, as `truloop-mcp --tools-dir` serves it."""
    configured = settings(tools_dir=tools_dir, data_dir=data_dir, **overrides)
    deployment = Deployment(configured)
    server = deployment.mcp_server()
    async with deployment.running():
        yield server
