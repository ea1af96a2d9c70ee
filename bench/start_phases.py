"""Cold start without the MCP SDK, phase by phase: what the server's own start path costs in a fresh process.

What a stdio server has to do before it can answer its first `tools/call`, apart from the SDK (the lean stdio
front answers `initialize`, `tools/list` and `tools/call` without importing `mcp`):

  settings    parse the server's flags and build `Settings` (flags > environment > defaults)
  deployment  `Deployment(settings)`: the store backend, the bridge, the services (nothing opened yet)
  door        `deployment.front_door`: the toolsets, gates, middleware and profiles composed
  visible     the default caller's context and the tools it sees
  schemas     every visible tool's input and output JSON Schema (what `tools/list` publishes)
  call        one `get_day_of_week` through the front door (the first call: audit log, store, ...)
  total       all of the above, from the child's first line (the interpreter's own start is not in it)
  python      spawn to the child's first line (the interpreter's start, site-packages' .pth files)
  wall        spawn to exit, as the parent sees it (the interpreter's start and its exit included)

Each phase is given in wall-clock time and in the child's CPU time (user + system, all threads), which other
load on the machine moves much less.

By default every run of a tree uses one data folder that an untimed run made first (a restart: the store
and the user exist); `--fresh-data` gives each run an empty one (the first start ever: the store is created).
Each run is a fresh interpreter (`python -c CHILD`, cwd = the tree measured), with the server's own first
step (`server.runtime.cold_start.before_imports`: the collector paused, pydantic's plugin scan off); the child fails
if `mcp` was imported. Trees are compiled to bytecode first (as a wheel install is), `--no-compile` to skip.
With `--before REF`, that revision (exported with `git archive`) runs interleaved with this tree, run for
run, so load on the machine falls on both alike; the table gives the median (and min) of each phase.

Usage:
    python bench/start_phases.py [--runs 9] [--before REF] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from bench_support import BenchError, exported_revision  # noqa: E402 (a sibling module of the benchmarks)

VENV_PYTHON = PROJECT_DIR / ".venv" / "bin" / "python"
PHASES = ("settings", "deployment", "door", "visible", "schemas", "call", "total")

# Runs in the child, from its first line; only `time` and `sys` are imported before the server's own first step.
CHILD = """
import time, sys
marks = [(time.perf_counter(), time.process_time())]
spawned = time.time()
def mark():
    marks.append((time.perf_counter(), time.process_time()))
from server.runtime.cold_start import before_imports
before_imports()
from server.cli.serve_command import build_parser
from server.cli.shared import settings_or_exit
flags = vars(build_parser().parse_args(sys.argv[1:]))
flags.pop("version", None)
settings = settings_or_exit(flags)
mark()
from server.runtime.composition import Deployment
import asyncio
d = Deployment(settings)
mark()
door = d.front_door
mark()
async def main():
    ctx = door.context_for(d.default_caller(), settings.profile)
    tools = await door.visible(ctx)
    mark()
    schemas = [(t.input_schema, t.output_schema) for t in tools]
    mark()
    result = await door.call(ctx, "get_day_of_week", {"date": "2026-03-10"})
    mark()
    if "mcp" in sys.modules:
        raise SystemExit("mcp was imported")
    if type(result).__name__ != "ToolOk" or "Tuesday" not in repr(result):
        raise SystemExit(f"unexpected result: {result!r}")
    for clock in (0, 1):
        steps = [1000 * (b[clock] - a[clock]) for a, b in zip(marks, marks[1:])]
        steps.append(1000 * (marks[-1][clock] - marks[0][clock]))
        print("WALL" if clock == 0 else "CPU", " ".join(f"{step:.2f}" for step in steps))
    print("INFO", len(tools), len(schemas), len(sys.modules), spawned)
asyncio.run(main())
"""


def compile_tree(python: str, tree: Path) -> None:
    packages = [str(tree / name) for name in ("server", "bridge", "toolsets") if (tree / name).is_dir()]
    done = subprocess.run([python, "-m", "compileall", "-q", *packages], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"compileall {tree} failed: {done.stdout[-500:]}{done.stderr[-500:]}")


def run_once(python: str, tree: Path, data_dir: Path) -> dict[str, float]:
    argv = [python, "-c", CHILD, "--data-dir", str(data_dir), "--user", "bench", "--timezone", "UTC"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for name in [key for key in env if key.startswith("TRULOOP_")]:
        del env[name]  # the defaults, whatever the shell exports
    spawned = time.time()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=60, check=False)
    wall = 1000 * (time.perf_counter() - started)
    lines = {line.split(" ", 1)[0]: line.split()[1:] for line in done.stdout.splitlines() if " " in line}
    if done.returncode != 0 or not {"WALL", "CPU", "INFO"} <= lines.keys():
        raise BenchError(f"child in {tree} failed ({done.returncode}): {done.stderr[-1500:]}{done.stdout[-500:]}")
    figures = dict(zip(PHASES, (float(value) for value in lines["WALL"]), strict=True))
    figures.update({f"cpu {name}": float(value) for name, value in zip(PHASES, lines["CPU"], strict=True)})
    figures["wall"] = wall
    figures["tools"] = float(lines["INFO"][0])
    figures["modules"] = float(lines["INFO"][2])
    figures["python"] = 1000 * (float(lines["INFO"][3]) - spawned)
    return figures


def table(results: dict[str, list[dict[str, float]]], columns: Sequence[str], note: str) -> str:
    rows = [["target", *(column.removeprefix("cpu ") for column in columns)]]
    for label, runs in results.items():
        rows.append([label, *(f"{statistics.median(run[c] for run in runs):.1f}" for c in columns)])
        rows.append(["  min", *(f"{min(run[c] for run in runs):.1f}" for c in columns)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join([note, *lines])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    python = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
    p.add_argument("--python", default=python, help="interpreter (default: %(default)s)")
    p.add_argument("--runs", type=int, default=9, help="fresh processes per tree (default 9)")
    p.add_argument("--before", default=None, metavar="REF", help="also run this git revision, interleaved")
    p.add_argument(
        "--fresh-data",
        action="store_true",
        help="an empty data folder for every run (the first start ever: the store is created); by default each tree "
        "has one data folder, made by an untimed run first, as a server that starts again finds it",
    )
    p.add_argument("--no-compile", action="store_true", help="do not compile the trees to bytecode first")
    p.add_argument("--json", type=Path, default=None, help="also write every run's figures to this file")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="start-phases-") as tmp:
        trees = {"this tree": PROJECT_DIR}
        with exported_revision(args.before, "start-before-") if args.before else contextlib.nullcontext() as before:
            if before is not None:
                trees = {f"before ({args.before})": before, **trees}
            if not args.no_compile:
                for tree in trees.values():
                    compile_tree(args.python, tree)
            results: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
            data_dirs = {label: Path(tempfile.mkdtemp(dir=tmp)) for label in trees}
            if not args.fresh_data:
                for label, tree in trees.items():
                    run_once(args.python, tree, data_dirs[label])  # untimed: the store and the user exist from here
            for _ in range(args.runs):
                for label, tree in trees.items():
                    data_dir = Path(tempfile.mkdtemp(dir=tmp)) if args.fresh_data else data_dirs[label]
                    results[label].append(run_once(args.python, tree, data_dir))
    print(
        table(
            results,
            ["python", *PHASES, "wall", "modules"],
            "wall clock (ms; median of the runs, `min` rows the fastest):",
        )
    )
    print()
    print(
        table(results, [f"cpu {name}" for name in PHASES], "CPU time of the child (ms; steadier on a loaded machine):")
    )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BenchError as exc:
        sys.stderr.write(f"start_phases: {exc}\n")
        raise SystemExit(1) from None
