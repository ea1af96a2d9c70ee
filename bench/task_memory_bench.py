"""What junk argument keys in MCP tasks cost the server's memory: the attack of docs/security.md#tasks, measured.

    .venv/bin/python bench/task_memory_bench.py [--tasks 60] [--junk-mb 3.9] [--before REF]

Spawns `python -m server --transport http --port 0` (no Redis: the tasks are kept in the process) and sends --tasks
2026-07-28 `tools/call forget_memory` requests as tasks, each with --junk-mb MB of argument keys the tool does not
know (the call fails at once: no such memory). Prints the server's RSS before, after, and its peak (VmHWM), in MB.
With `--before REF` the same runs first against revision REF (git archive into a temporary folder), then this tree.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
import jwt

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR / "bench"))

from bench_support import exported_revision, peak_rss_kib  # noqa: E402

SECRET = "bench-secret-" + "x" * 32
AUDIENCE = "truloop-bench"
SERVING = re.compile(r"serving (http://\S+)/mcp\b")
EXT = "io.modelcontextprotocol/tasks"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bearer() -> str:
    claims = {"sub": "bench-user", "role": "member", "aud": AUDIENCE, "exp": int(time.time() + 600)}
    return jwt.encode(claims, SECRET, algorithm="HS256")


async def attack(base: str, tasks: int, junk_mb: float) -> int:
    junk = {f"junk{n}": "x" * 100_000 for n in range(int(junk_mb * 10))}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {EXT: {}}}}  # fmt: skip
    headers = {
        "Authorization": f"Bearer {bearer()}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "forget_memory",
    }
    made = 0
    async with httpx.AsyncClient(timeout=60) as client:
        for n in range(tasks):
            params = {"name": "forget_memory", "arguments": {"memory_id": f"m{n}", **junk}, "_meta": meta}
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            response = await client.post(f"{base}/mcp", json=body, headers=headers)
            made += '"taskId"' in response.text
    return made


def measure(src: Path, label: str, tasks: int, junk_mb: float) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_") and k not in ("REDIS_URL", "DATABASE_URL")
    }
    env.update(TRULOOP_JWT_SECRET=SECRET, TRULOOP_JWT_AUDIENCE=AUDIENCE, PYTHONPATH=str(src))
    with tempfile.TemporaryDirectory(prefix="task-memory-bench-") as tmp:
        log = Path(tmp) / "server.log"
        args = [sys.executable, "-m", "server", "--transport", "http", "--host", "127.0.0.1", "--port", "0",
                "--data-dir", str(Path(tmp) / "data")]  # fmt: skip
        with log.open("wb") as out:
            proc = subprocess.Popen(args, env=env, cwd=src, stdout=out, stderr=out)
        try:
            deadline = time.monotonic() + 30
            while not (serving := SERVING.search(log.read_text(errors="replace"))):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{label}: the server did not start: {log.read_text()[-500:]}")
                time.sleep(0.05)
            base = serving.group(1)
            anyio.run(attack, base, 1, 0.0)  # (warm: the tools are built on first use)
            before = rss_mb(proc.pid)
            started = time.monotonic()
            made = anyio.run(attack, base, tasks, junk_mb)
            after, peak = rss_mb(proc.pid), (peak_rss_kib(proc.pid) or 0) / 1024
            took = time.monotonic() - started
            print(f"{label}: {made}/{tasks} tasks of {junk_mb} MB junk in {took:.1f} s: "
                  f"RSS {before:.0f} -> {after:.0f} MB (peak {peak:.0f} MB)")  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--junk-mb", type=float, default=3.9)
    parser.add_argument("--before", help="a git revision to measure first")
    options = parser.parse_args()
    if options.before:
        with exported_revision(options.before, "task-memory-before-") as old:
            measure(old, f"before ({options.before})", options.tasks, options.junk_mb)
    measure(PROJECT_DIR, "after", options.tasks, options.junk_mb)


if __name__ == "__main__":
    main()
