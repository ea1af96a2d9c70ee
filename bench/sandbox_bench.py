"""Sandbox benchmark: the cost of one `run_shell "true"` inside the bubblewrap sandbox against unsandboxed.

Through the workspace toolset in-process (the tool, its checks, the sandbox's process and its output), --runs
calls of each, interleaved (sandboxed, unsandboxed, sandboxed, ...) so drift hits both alike, after --warmup
calls each; prints p50/p95/mean in milliseconds and the sandbox's overhead at p50. Target: under 30 ms p50
sandboxed.

Usage (from any cwd):
    python bench/sandbox_bench.py [--runs 200] [--warmup 10] [--python]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from toolsets.core.toolset import Toolset
from toolsets.extensions.workspace import workspace_toolset
from toolsets.infra.sandbox import SandboxConfig, WorkspaceSandbox


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed(run_shell: Any, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await run_shell(**arguments)
    elapsed = (time.perf_counter() - started) * 1000
    assert result.exit_code == 0, result
    return elapsed


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="truloop-sandbox-bench-") as folder:
        root = Path(folder)
        kinds: dict[str, Toolset] = {
            "sandboxed": workspace_toolset(root, sandbox=WorkspaceSandbox(SandboxConfig(root))),
            "unsandboxed": workspace_toolset(root, sandbox=WorkspaceSandbox(SandboxConfig(root, unsandboxed=True))),
        }
        tool = "run_python" if args.python else "run_shell"
        arguments = {"code": "pass"} if args.python else {"command": "true"}
        functions = {name: toolset.get(tool).function for name, toolset in kinds.items()}  # type: ignore[union-attr]
        times: dict[str, list[float]] = {name: [] for name in kinds}
        for _ in range(args.warmup):
            for function in functions.values():
                await timed(function, arguments)
        for _ in range(args.runs):
            for name, function in functions.items():
                times[name].append(await timed(function, arguments))
    print(f"{tool} {arguments}: {args.runs} interleaved runs each (ms)")
    for name, values in times.items():
        print(
            f"  {name:12} p50 {percentile(values, 0.5):6.2f}  p95 {percentile(values, 0.95):6.2f}  "
            f"mean {statistics.fmean(values):6.2f}"
        )
    overhead = percentile(times["sandboxed"], 0.5) - percentile(times["unsandboxed"], 0.5)
    print(f"  sandbox overhead at p50: {overhead:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--python", action="store_true", help="time run_python 'pass' instead of run_shell 'true'")
    anyio.run(bench, parser.parse_args())


if __name__ == "__main__":
    main()
