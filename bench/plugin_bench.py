"""Plugins over stdio: a trivial plugin's call p50/p99 in each isolation mode (next to the built-in
`get_day_of_week`), and the time from saving a new version of the file to that version serving.

Three servers run side by side over pipes (`--plugin-isolation inprocess`, `process`, and the same
inprocess one for the built-in); calls alternate between them. The reload figure: the file is rewritten
with a new answer, and `tools/call` is repeated (every 5 ms) until the answer changes; the time from
the write to that answer, p50 and max over the rounds.

    python bench/plugin_bench.py [--calls 2000] [--warmup 200] [--reloads 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = """TOOL_SPEC = {{
    "name": "echo_text",
    "description": "Echo the text back.",
    "input_schema": {{"type": "object", "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}},
    "annotations": {{"readOnlyHint": True}},
}}


def run(input_data, context):
    return {{"text": input_data["text"], "round": {round}}}
"""


class Server:
    def __init__(self, tools: Path, data: Path, isolation: str) -> None:
        exe = Path(sys.executable).parent / "truloop-mcp"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_") and k != "REDIS_URL"}
        args = [
            "--tools-dir",
            str(tools),
            "--plugin-isolation",
            isolation,
            "--data-dir",
            str(data),
            "--audit-log",
            "off",
        ]
        self.proc = subprocess.Popen(
            [str(exe), *args, "--user", "bench", "--timezone", "UTC"],
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def reload_rounds(server: Server, plugin: Path, rounds: int) -> list[float]:
    waits = []
    for round_number in range(1, rounds + 1):
        time.sleep(0.3)  # let the previous save settle, as between two real edits
        saved = time.perf_counter()
        plugin.write_text(PLUGIN.format(round=round_number))
        while True:
            _, result = server.call("echo_text", {"text": "x"})
            if result["structuredContent"]["round"] == round_number:  # type: ignore[index]
                waits.append(time.perf_counter() - saved)
                break
            time.sleep(0.005)
    return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--reloads", type=int, default=20)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plugin-bench-") as scratch:
        root = Path(scratch)
        servers = {}
        for isolation in ("inprocess", "process"):
            tools = root / isolation / "tools"
            tools.mkdir(parents=True)
            (tools / "echo_text.py").write_text(PLUGIN.format(round=0))
            servers[isolation] = (Server(tools, root / isolation / "data", isolation), tools / "echo_text.py")
        targets = {
            "built-in get_day_of_week": (servers["inprocess"][0], "get_day_of_week", {"date": "2026-03-10"}),
            "plugin, inprocess": (servers["inprocess"][0], "echo_text", {"text": "hello"}),
            "plugin, process": (servers["process"][0], "echo_text", {"text": "hello"}),
        }
        timings: dict[str, list[float]] = {label: [] for label in targets}
        for index in range(options.warmup + options.calls):
            for label, (server, name, arguments) in targets.items():
                elapsed, _ = server.call(name, arguments)
                if index >= options.warmup:
                    timings[label].append(elapsed)
        print(f"calls over stdio ({options.calls} each, after {options.warmup} warm-up), ms:")
        for label, values in timings.items():
            p50, p99 = statistics.median(values) * 1000, percentile(values, 0.99) * 1000
            print(f"  {label:<26} p50 {p50:6.3f}   p99 {p99:6.3f}")
        print(f"save -> new version serving ({options.reloads} saves each), ms:")
        for isolation, (server, plugin) in servers.items():
            waits = reload_rounds(server, plugin, options.reloads)
            print(f"  {isolation:<26} p50 {statistics.median(waits) * 1000:6.0f}   max {max(waits) * 1000:6.0f}")
        for server, _ in servers.values():
            server.close()


if __name__ == "__main__":
    main()
