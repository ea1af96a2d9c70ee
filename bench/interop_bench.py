"""Interop benchmark: `truloop-mcp call` over a pipe, and the runner's cost per call against a direct dispatch.

Measured:
  pipe, lines   --calls get_day_of_week calls, one LangChain tool_call per line, written to a fresh
                `truloop-mcp call` while its replies are read; calls/s from the first byte written to the last
                reply read (start-up excluded; it is reported apart: spawn to the first reply of a one-line run).
  pipe, batch   the same calls as one line holding a list (one document: its calls run concurrently).
  in-process    per call, median of --rounds rounds of --calls calls each, interleaved:
                  dispatch  `toolsets.core.dispatch.dispatch(profile, "get_day_of_week", args, ctx)`
                  runner    `InteropRunner.reply(call)`: shape detection + dispatch + the reply dict
                  runner+   the same plus `json.loads` of the line and `json.dumps` of the reply (the pipe's work)
                overhead = runner - dispatch.

Usage (from any cwd):
    python bench/interop_bench.py [--calls 10000] [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TRULOOP = str(Path(sys.executable).parent / "truloop-mcp")


def call_of(number: int) -> dict[str, Any]:
    day = 1 + number % 28
    return {"type": "tool_call", "id": f"c{number}", "name": "get_day_of_week", "args": {"date": f"2026-03-{day:02d}"}}


def run_pipe(stdin: bytes, expected_lines: int, data_dir: str) -> tuple[float, float, list[bytes]]:
    """(seconds from spawn to the first reply, seconds from the first byte written to the last reply, replies)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    spawned = time.perf_counter()
    proc = subprocess.Popen(
        [TRULOOP, "call", "--user", "bench", "--timezone", "UTC", "--data-dir", data_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    started = time.perf_counter()

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    replies = []
    first_reply = 0.0
    for line in proc.stdout:
        if not replies:
            first_reply = time.perf_counter()
        replies.append(line)
    ended = time.perf_counter()
    writer.join()
    if proc.wait() != 0 or len(replies) != expected_lines:
        raise SystemExit(f"truloop-mcp call failed: status {proc.returncode}, {len(replies)} replies")
    return first_reply - spawned, ended - started, replies


def pipe_figures(calls: int) -> dict[str, Any]:
    documents = [call_of(number) for number in range(calls)]
    with tempfile.TemporaryDirectory() as data_dir:
        run_pipe(json.dumps(documents[0]).encode() + b"\n", 1, data_dir)  # create the store once
        startup, _, _ = run_pipe(json.dumps(documents[0]).encode() + b"\n", 1, data_dir)
        per_line = b"".join(json.dumps(doc).encode() + b"\n" for doc in documents)
        _, lines_seconds, replies = run_pipe(per_line, calls, data_dir)
        assert all(b'"status":"success"' in reply for reply in replies)
        batch = json.dumps(documents).encode() + b"\n"
        _, batch_seconds, (batch_reply,) = run_pipe(batch, 1, data_dir)
        assert json.loads(batch_reply)[-1]["tool_call_id"] == f"c{calls - 1}"
    return {
        "startup_to_first_reply_s": round(startup, 3),
        "lines_calls_per_s": round(calls / lines_seconds),
        "lines_seconds": round(lines_seconds, 3),
        "batch_calls_per_s": round(calls / batch_seconds),
        "batch_seconds": round(batch_seconds, 3),
    }


async def in_process_figures(calls: int, rounds: int) -> dict[str, Any]:
    from toolsets.core.context import Caller, RequestInfo, ToolContext
    from toolsets.core.dispatch import dispatch
    from toolsets.infra.store.sqlite.backend import SqliteBackend
    from toolsets.interop import runner_for
    from toolsets.services import Services

    with tempfile.TemporaryDirectory() as folder:
        services = Services(backend=SqliteBackend(Path(folder)), data_dir=Path(folder), docs_dir=Path(folder) / "docs")
        caller = Caller("bench", timezone="UTC")
        runner = runner_for(services, caller, "member")
        toolset = runner.toolset
        documents = [call_of(number) for number in range(calls)]
        lines = [json.dumps(doc) for doc in documents]
        await runner.reply(documents[0])  # enter the directory, build the schemas

        async def direct() -> None:
            for doc in documents:
                ctx = ToolContext(caller=caller, deps=services, request=RequestInfo(request_id=doc["id"]))
                await dispatch(toolset, doc["name"], doc["args"], ctx)

        async def through_runner() -> None:
            for doc in documents:
                await runner.reply(doc)

        async def through_runner_json() -> None:
            for line in lines:
                json.dumps(await runner.reply(json.loads(line)), ensure_ascii=False, separators=(",", ":"))

        timings: dict[str, list[float]] = {"dispatch": [], "runner": [], "runner+json": []}
        steps = {"dispatch": direct, "runner": through_runner, "runner+json": through_runner_json}
        for _ in range(rounds):
            for name, step in steps.items():
                started = time.perf_counter()
                await step()
                timings[name].append((time.perf_counter() - started) / calls * 1e6)
        services.close()
    medians = {name: statistics.median(values) for name, values in timings.items()}
    return {
        "dispatch_us_per_call": round(medians["dispatch"], 1),
        "runner_us_per_call": round(medians["runner"], 1),
        "runner_json_us_per_call": round(medians["runner+json"], 1),
        "runner_overhead_us_per_call": round(medians["runner"] - medians["dispatch"], 1),
        "runner_overhead_pct": round(100 * (medians["runner"] / medians["dispatch"] - 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    import anyio

    figures = {
        "machine": f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cpus",
        "calls": args.calls,
        "pipe": pipe_figures(args.calls),
        "in_process": anyio.run(in_process_figures, args.calls, args.rounds),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
