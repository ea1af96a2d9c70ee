"""What a stdio server imports and never uses: the evidence for docs/upstream-lazy-imports.md.

    .venv/bin/python bench/stdio_imports.py

1. `python -X importtime -m server` answers initialize, tools/list and one tools/call on stdio; the
   modules it imported and their self import time are read from stderr.
2. In this process, truloop-mcp is built the same way and a profiler counts, per module, the
   functions that run while a stdio session (initialize, tools/list, tools/call) is served over a
   pipe pair: code that runs only at import time does not count.

Printed: per package group, modules imported, self import ms, functions called while serving.
A group with 0 calls is imported by stdio and never used by it.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "imports", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_day_of_week",
     "arguments": {"date": "2026-03-10"}}},
]  # fmt: skip
# Sub-packages of mcp that are their own group (the rest of mcp is "mcp (core)")
MCP_GROUPS = (
    "mcp.client", "mcp.server.auth", "mcp.server.streamable_http", "mcp.server.streamable_http_manager",
    "mcp.server._streamable_http_modern", "mcp.server.sse", "mcp.server.transport_security", "mcp.server.apps",
    "mcp.shared._httpx_utils", "mcp.shared.auth", "mcp.os",
)  # fmt: skip


def group_of(module: str) -> str:
    for name in MCP_GROUPS:
        if module == name or module.startswith(name + "."):
            return name
    top = module.split(".")[0]
    return "mcp (core)" if top == "mcp" else top


def import_times(data_dir: str) -> dict[str, tuple[int, float]]:
    """group -> (modules, self import ms) for a real stdio session."""
    payload = "".join(json.dumps(m) + "\n" for m in SESSION)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "server", "--data-dir", data_dir],
        input=payload, capture_output=True, text=True, cwd=PROJECT_DIR, timeout=60, check=True,
    )  # fmt: skip
    groups: dict[str, list[float]] = collections.defaultdict(list)
    for line in proc.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if found:
            groups[group_of(found.group(2))].append(int(found.group(1)) / 1000)
    return {group: (len(times), sum(times)) for group, times in groups.items()}


def calls_while_serving(data_dir: str) -> collections.Counter[str]:
    """group -> functions called while a stdio session is served in this process."""
    import anyio

    from server.runtime.server_factory import build_server
    from server.settings import Settings
    from server.stdio.sdk_transport import serve_stdio, stdio_channel

    server = build_server(Settings(user="local", timezone="Asia/Seoul", data_dir=Path(data_dir)))
    calls: collections.Counter[str] = collections.Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[group_of(frame.f_globals.get("__name__", "?"))] += 1

    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    os.write(request_write, "".join(json.dumps(m) + "\n" for m in SESSION).encode())
    os.close(request_write)
    replies: list[bytes] = []
    reader = threading.Thread(target=lambda: replies.append(os.fdopen(reply_read, "rb").read()), daemon=True)
    reader.start()

    async def serve() -> None:
        async with stdio_channel(stdin_fd=request_read, stdout_fd=reply_write) as channel:
            sys.setprofile(profile)
            try:
                await serve_stdio(server, channel)
            finally:
                sys.setprofile(None)

    anyio.run(serve)
    os.close(reply_write)
    os.close(request_read)
    reader.join(10)
    answered = {json.loads(line).get("id") for line in b"".join(replies).splitlines() if line.strip()}
    assert {1, 2, 3} <= answered, f"the session was not served: {replies!r}"
    return calls


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="stdio-imports-") as tmp:
        times = import_times(str(Path(tmp) / "a"))
        calls = calls_while_serving(str(Path(tmp) / "b"))
    print(f"{'group':<38}{'modules':>8}{'import ms':>11}{'calls':>9}")
    unused_ms = 0.0
    for group, (count, ms) in sorted(times.items(), key=lambda kv: -kv[1][1]):
        if ms < 3:  # the long tail (C extensions never show Python calls anyway)
            continue
        print(f"{group:<38}{count:>8}{ms:>11.1f}{calls[group]:>9}")
        if not calls[group]:
            unused_ms += ms
    total = sum(ms for _, ms in times.values())
    print(f"all: {sum(c for c, _ in times.values())} modules, {total:.0f} ms self import time; "
          f"groups never called while serving stdio: {unused_ms:.0f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
