"""Plugins over stdio: a trivial plugin's call p50/p99 in each isolation mode (next to the built-in
`get_day_of_week`), `context.call_tool`'s cost, and the time from saving a new version of the file to that
version serving.

Three servers run side by side over pipes (`--plugin-isolation inprocess`, `process` and `sandbox`; the
inprocess one also for the built-in); calls alternate between them. `context.call_tool`: a plugin that calls
`get_day_of_week` through it, against the trivial plugin (what one nested call adds, the whole of it). The
reload figure: the file is rewritten with a new answer, and `tools/call` is repeated (every 5 ms) until the
answer changes; the time from the write to that answer, p50 and max over the rounds.

    python bench/plugin_bench.py [--calls 2000] [--warmup 200] [--reloads 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from stdio_session import StdioSession

PLUGIN = """TOOL_SPEC = {{
    "name": "echo_text",
    "description": "Echo the text back.",
    "input_schema": {{"type": "object", "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}},
    "annotations": {{"readOnlyHint": True}},
}}


def run(input_data, context):
    return {{"text": input_data["text"], "round": {round}}}
"""


NESTED = """TOOL_SPEC = {
    "name": "nested_day",
    "description": "The day of the week, asked through context.call_tool.",
    "input_schema": {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
    "annotations": {"readOnlyHint": True},
}


def run(input_data, context):
    return context.call_tool("get_day_of_week", {"date": input_data["date"]})
"""


def Server(tools: Path, data: Path, isolation: str) -> StdioSession:  # noqa: N802 - reads as a constructor
    return StdioSession(
        "--tools-dir", str(tools), "--plugin-isolation", isolation, "--data-dir", str(data), "--audit-log", "off"
    )


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
        for isolation in ("inprocess", "process", "sandbox"):
            tools = root / isolation / "tools"
            tools.mkdir(parents=True)
            (tools / "echo_text.py").write_text(PLUGIN.format(round=0))
            (tools / "nested_day.py").write_text(NESTED)
            servers[isolation] = (Server(tools, root / isolation / "data", isolation), tools / "echo_text.py")
        targets = {
            "built-in get_day_of_week": (servers["inprocess"][0], "get_day_of_week", {"date": "2026-03-10"}),
            "plugin, inprocess": (servers["inprocess"][0], "echo_text", {"text": "hello"}),
            "plugin, process": (servers["process"][0], "echo_text", {"text": "hello"}),
            "plugin, sandbox": (servers["sandbox"][0], "echo_text", {"text": "hello"}),
            "call_tool, inprocess": (servers["inprocess"][0], "nested_day", {"date": "2026-03-10"}),
            "call_tool, sandbox": (servers["sandbox"][0], "nested_day", {"date": "2026-03-10"}),
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
        p50 = {label: statistics.median(values) * 1000 for label, values in timings.items()}
        for mode in ("inprocess", "sandbox"):
            added = p50[f"call_tool, {mode}"] - p50[f"plugin, {mode}"]
            print(f"  one context.call_tool ({mode}) adds {added:6.3f} ms to a plugin's call (the nested call whole)")
        print(f"save -> new version serving ({options.reloads} saves each), ms:")
        for isolation, (server, plugin) in servers.items():
            waits = reload_rounds(server, plugin, options.reloads)
            print(f"  {isolation:<26} p50 {statistics.median(waits) * 1000:6.0f}   max {max(waits) * 1000:6.0f}")
        for server, _ in servers.values():
            server.close()


if __name__ == "__main__":
    main()
