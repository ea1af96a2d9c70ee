"""A blocking JSON-RPC session with `truloop-mcp` over its stdio pipes, for benchmarks (no MCP client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


class StdioSession:
    """`truloop-mcp ARGS` as a subprocess, initialized (handshake era), answering one request at a time."""

    def __init__(self, *args: str, source: Path | None = None) -> None:
        """`source`: run the server from that folder (an exported past revision) instead of the installed one."""
        exe = Path(sys.executable).parent / "truloop-mcp"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_") and k != "REDIS_URL"}
        command = [str(exe)] if source is None else [sys.executable, "-m", "server"]
        if source is not None:
            env["PYTHONPATH"] = str(source)
        self.proc = subprocess.Popen(
            [*command, *args, "--user", "bench", "--timezone", "UTC"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def call(self, name: str, arguments: dict[str, object]) -> tuple[float, dict[str, object]]:
        """(seconds, result) of one successful tools/call."""
        started = time.perf_counter()
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        elapsed = time.perf_counter() - started
        result = reply.get("result")
        assert isinstance(result, dict) and not result.get("isError"), reply
        return elapsed, result

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
