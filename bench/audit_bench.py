"""Audit log benchmark: truloop-mcp over stdio with the audit log off (a) and on (b), and the writer alone.

  call latency  one long-lived stdio session per server, --calls sequential `get_day_of_week` calls,
                alternating a, b (so drift hits both alike); p50/p99 and the overhead of b over a.
  pipelined     --pipeline calls written at once, --rounds rounds alternating a, b; calls/s (median).
  writer        in-process `AuditLog`: the call path's cost per line (`emit`), and lines/s to disk
                until flushed (masking and JSON encoding included), for --lines realistic entries.
  masking       the masker alone, uncached: microseconds per string over a mix of free text (Korean and
                English, with and without contacts and secrets), ids, dates and versions.

Usage (from any cwd):
    python bench/audit_bench.py [--calls 2000] [--pipeline 1000] [--rounds 5] [--lines 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

import stdio_bench as sb  # noqa: E402  (the stdio driver: raw JSON lines over pipes)


def targets(data_dir: Path) -> tuple[sb.Target, sb.Target]:
    binary = str(sb.PROJECT_DIR / ".venv" / "bin" / "truloop-mcp")
    common = ("--data-dir", str(data_dir), "--user", "bench", "--timezone", "UTC")
    off = sb.Target("off", "audit off", (binary, *common, "--audit-log", "off"))
    on = sb.Target("on", "audit on", (binary, *common, "--audit-log", str(data_dir / "audit" / "tool-calls.jsonl")))
    return off, on


def stdio_figures(args: argparse.Namespace, data_dir: Path) -> dict[str, dict[str, float]]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("TRULOOP_")}
    launcher = sb.Launcher(env=env, timeout=30.0)
    off, on = targets(data_dir)
    try:
        sessions = {t.key: sb.open_session(launcher, t, args.warmup) for t in (off, on)}
        latency: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.calls):
            for key in ("off", "on"):
                latency[key].append(sb.timed_call(launcher, sessions[key]))
        throughput: dict[str, list[float]] = {"off": [], "on": []}
        cpu: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.rounds):
            for key in ("off", "on"):
                calls_per_s, cpu_per_call = sb.pipelined(launcher, sessions[key], args.pipeline)
                throughput[key].append(calls_per_s)
                if cpu_per_call is not None:
                    cpu[key].append(cpu_per_call)
    finally:
        launcher.close_all()
    figures: dict[str, dict[str, float]] = {}
    for key in ("off", "on"):
        figures[key] = {
            "p50_ms": sb.percentile(latency[key], 50) * 1e3,
            "p99_ms": sb.percentile(latency[key], 99) * 1e3,
            "pipelined_calls_per_s": statistics.median(throughput[key]),
            "cpu_ms_per_call": statistics.median(cpu[key]) * 1e3 if cpu[key] else float("nan"),
        }
    audit_file = data_dir / "audit" / "tool-calls.jsonl"
    figures["on"]["lines_written"] = float(sum(1 for _ in audit_file.open())) if audit_file.exists() else 0.0
    return figures


def writer_figures(lines: int, data_dir: Path) -> dict[str, float]:
    from toolsets.pipeline.audit.writer import AuditLog

    log = AuditLog(data_dir / "writer" / "tool-calls.jsonl", queue_size=lines + 1)
    entry: dict[str, Any] = {
        "ts": time.time(), "event": "tool_result", "call_id": "tc_0123456789abcdef", "request_id": "42",
        "session_id": "6f1c2c0e9b8a4d7e", "transport": "http", "protocol_version": "2025-11-25", "user_id": "alice",
        "role": "member", "profile": "member", "tool_name": "save_memory", "tool_version": "0.1.0", "route": "stable",
        "arguments": {"content": "Lunch with Minji (010-1234-5678, minji@example.com) on 2026-03-10 at 12:30",
                      "tags": ["lunch", "minji"]},
        "status": "ok", "error_code": None, "latency_ms": 3.2, "deferred_route": None, "nested": False,
    }  # fmt: skip
    started = time.perf_counter()
    for _ in range(lines):
        log.emit(dict(entry))
    emitted = time.perf_counter() - started
    if not log.flush(timeout=600):
        raise SystemExit("the writer did not drain within 600 s")
    drained = time.perf_counter() - started
    return {
        "lines": float(lines),
        "emit_us_per_line": emitted / lines * 1e6,
        "lines_per_s_to_disk": lines / drained,
        "dropped": float(log.dropped),
        "bytes": float(sum(p.stat().st_size for p in (data_dir / "writer").iterdir())),
    }


MASKING_TEXTS = (
    "Lunch with Minji (010-1234-5678, minji@example.com) on 2026-03-10 at 12:30",
    "민지랑 2026-03-10 12:30에 점심, 연락처는 010-1234-5678, 메일 minji@example.com",
    "Remember that the wifi password: hunter2 and the door code changes on 2026-04-01T09:00:00+09:00",
    "비밀번호는 qwerty123 이고 카드번호 4111 1111 1111 1111 는 쓰지 말 것",
    "Team offsite agenda: review Q1 numbers (12,450 users, 3.2% churn), plan the 2026-03-10 launch",
    "회의록: 다음 주 화요일 오후 3시에 디자인 리뷰, 참석자 5명, 예산 1,200,000원",
    "evt_3f9a1c2b7d4e4f5a8b6c tc_96a52d921c7740ea 6f1c2c0e-9b8a-4d7e-a1b2-c3d4e5f60718",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 version 1.4.2",
    "Call +1 (415) 555-2671 or 0044 20 7946 0958 after 10:00-11:30, ask for Alex",
    "Authorization: Bearer abc.def.ghi and token: 8f7e6d5c4b3a",
    "주민번호 900101-1234567 는 마스킹, 주문번호 20260310123456 는 그대로",
    "plain note without anything special in it, just words about the weekend and a hike",
)


def masking_figures(rounds: int) -> dict[str, float]:
    from toolsets.pipeline.audit.masking import Masker

    masker = Masker(["test-secret-" + "x" * 32])
    mask = masker._mask  # uncached: what a line whose strings were not seen before costs
    started = time.perf_counter()
    for _ in range(rounds):
        for text in MASKING_TEXTS:
            mask(text)
    elapsed = time.perf_counter() - started
    return {
        "strings": float(rounds * len(MASKING_TEXTS)),
        "us_per_string": elapsed / (rounds * len(MASKING_TEXTS)) * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per server (default 2000)")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--pipeline", type=int, default=1000, help="calls per pipelined round (default 1000)")
    parser.add_argument("--rounds", type=int, default=5, help="pipelined rounds per server (default 5)")
    parser.add_argument("--lines", type=int, default=100_000, help="entries for the writer figure (default 100000)")
    parser.add_argument("--masking", type=int, default=20_000, help="rounds over the masking corpus (default 20000)")
    parser.add_argument("--only-masking", action="store_true", help="print the masking figure only")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    masking = masking_figures(args.masking)
    masking_line = (
        f"masking: {masking['us_per_string']:.2f} us per string, uncached ({masking['strings']:.0f} strings of "
        f"{len(MASKING_TEXTS)} kinds)"
    )
    if args.only_masking:
        print(masking_line)
        return 0
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as scratch:
        stdio = stdio_figures(args, Path(scratch) / "stdio")
        writer = writer_figures(args.lines, Path(scratch))
    off, on = stdio["off"], stdio["on"]
    print("| over stdio | audit off | audit on | overhead |")
    print("|---|---|---|---|")
    for key, label in (("p50_ms", "call p50 (ms)"), ("p99_ms", "call p99 (ms)")):
        print(f"| {label} | {off[key]:.3f} | {on[key]:.3f} | {(on[key] / off[key] - 1) * 100:+.1f}% |")
    cps = "pipelined_calls_per_s"
    print(f"| pipelined calls/s | {off[cps]:.0f} | {on[cps]:.0f} | {(on[cps] / off[cps] - 1) * 100:+.1f}% |")
    cpu = "cpu_ms_per_call"
    print(f"| server CPU per call (ms) | {off[cpu]:.3f} | {on[cpu]:.3f} | {(on[cpu] / off[cpu] - 1) * 100:+.1f}% |")
    print()
    print(f"audit lines written by the 'on' server: {on['lines_written']:.0f}")
    print(
        f"writer: {writer['lines']:.0f} lines; emit {writer['emit_us_per_line']:.2f} us/line on the call path; "
        f"{writer['lines_per_s_to_disk']:.0f} lines/s to disk (masked, encoded, appended); "
        f"{writer['dropped']:.0f} dropped; {writer['bytes'] / writer['lines']:.0f} bytes/line"
    )
    print(masking_line)
    if args.json is not None:
        args.json.write_text(json.dumps({"stdio": stdio, "writer": writer, "masking": masking}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
