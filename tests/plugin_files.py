"""Plugin files the plugin tests write into a tools folder, and the server around them."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from server.mcp.mcp_server import TruloopMCP
from server.runtime.composition import Deployment
from tests.support import TRULOOP, child_env, settings

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
    async with deployment:
        yield server


def plugin_stdio_server(tools_dir: Path, data_dir: Path, isolation: str) -> subprocess.Popen[bytes]:
    """`truloop-mcp` over stdio serving `tools_dir` with this plugin isolation (stderr discarded)."""
    return subprocess.Popen(
        [TRULOOP, "--tools-dir", str(tools_dir), "--data-dir", str(data_dir), "--plugin-isolation", isolation],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )


class StdioSession:
    """A blocking JSON-RPC session with a stdio server, handshake done (2025-11-25)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server ended"
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply
