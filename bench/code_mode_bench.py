"""Code mode over stdio: what one `execute_code` program costs, what each inner call adds, and a realistic chain
("plan a meeting with two people next week") made one call at a time over MCP against one program doing the same.

One server (`--code-mode --demo`, its own temporary data folder) over pipes. Figures:

- a program that makes no call (`result = 1`), and one that makes one call (`get_current_datetime`): p50 / p99 of
  the whole `tools/call`, with the warm pool (the default 2) and without it (`--code-mode-warm 0`, a fresh sandbox and
  interpreter per program);
- per inner call: (a program of 41 calls - a program of 1 call) / 40, p50;
- the chain: 4 `tools/call` round trips (the date, two people, next week's events), against one program that makes
  the same 4 calls and returns only the free slots; round trips, bytes on the wire (requests and answers, what the
  model writes and reads) and wall time.

    python bench/code_mode_bench.py [--runs 60] [--warmup 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from stdio_session import StdioSession

EMPTY = "result = 1"
ONE_CALL = "result = tools.get_current_datetime()"
MANY_CALLS = "for _ in range(41):\n    now = tools.get_current_datetime()\nresult = now"

PLAN = """
import datetime as dt
today = dt.date.fromisoformat(tools.get_current_datetime()["date"])
people = [tools.search_users(query=name)["users"][0] for name in ("Minji", "Junho")]
monday = today + dt.timedelta(days=7 - today.weekday())
week = [monday + dt.timedelta(days=d) for d in range(5)]
friday_night = monday + dt.timedelta(days=5)
events = tools.get_events(start=f"{monday}T00:00:00+00:00", end=f"{friday_night}T00:00:00+00:00")["events"]
busy = [(dt.datetime.fromisoformat(e["start"]), dt.datetime.fromisoformat(e["end"])) for e in events]
free = []
for day in week:
    for hour in range(10, 16):
        start = dt.datetime(day.year, day.month, day.day, hour, tzinfo=dt.timezone.utc)
        end = start + dt.timedelta(hours=1)
        if all(end <= b_start or start >= b_end for b_start, b_end in busy):
            free.append(start.isoformat())
result = {"with": [p["id"] for p in people], "free": free[:3], "busy": len(busy)}
"""


def timed(session: StdioSession, code: str, runs: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        session.call("execute_code", {"code": code})
    times = []
    for _ in range(runs):
        elapsed, _ = session.call("execute_code", {"code": code})
        times.append(elapsed * 1000)
        time.sleep(0.02)  # the pool refills between programs, as between a model's turns
    return times


def p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def wire(session: StdioSession, name: str, arguments: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    """(seconds, bytes of the request and its answer, the structured result) of one tools/call."""
    request = {"jsonrpc": "2.0", "id": session.next_id + 1, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}  # fmt: skip
    elapsed, result = session.call(name, arguments)
    answer = {"jsonrpc": "2.0", "id": session.next_id, "result": result}
    size = len(json.dumps(request).encode()) + len(json.dumps(answer).encode())
    return elapsed, size, dict(result.get("structuredContent") or {})


def chain(session: StdioSession) -> tuple[int, int, float]:
    """The meeting plan made one call at a time: (round trips, bytes, seconds)."""
    import datetime as dt

    total_bytes, total_s = 0, 0.0
    elapsed, size, now = wire(session, "get_current_datetime", {})
    total_bytes, total_s = total_bytes + size, total_s + elapsed
    for name in ("Minji", "Junho"):
        elapsed, size, _ = wire(session, "search_users", {"query": name})
        total_bytes, total_s = total_bytes + size, total_s + elapsed
    today = dt.date.fromisoformat(now["date"])
    monday = today + dt.timedelta(days=7 - today.weekday())
    week = {"start": f"{monday}T00:00:00+00:00", "end": f"{monday + dt.timedelta(days=5)}T00:00:00+00:00"}
    elapsed, size, _ = wire(session, "get_events", week)
    return 4, total_bytes + size, total_s + elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="truloop-code-bench-") as scratch:
        for warm in ("2", "0"):
            data = Path(scratch) / f"data-{warm}"
            session = StdioSession("--code-mode", "--code-mode-warm", warm, "--demo", "--data-dir", str(data))
            try:
                empty = timed(session, EMPTY, args.runs, args.warmup)
                one = timed(session, ONE_CALL, args.runs, args.warmup)
                print(f"warm pool {warm}: empty program p50 {p(empty, 0.5):.1f} ms p99 {p(empty, 0.99):.1f} ms; "
                      f"one-call program p50 {p(one, 0.5):.1f} ms p99 {p(one, 0.99):.1f} ms")  # fmt: skip
                if warm == "0":
                    continue
                many = timed(session, MANY_CALLS, args.runs, args.warmup)
                per_call = (statistics.median(many) - statistics.median(one)) / 40
                direct = [session.call("get_current_datetime", {})[0] * 1000 for _ in range(args.runs)]
                print(f"per inner call: {per_call:.2f} ms (p50; a direct tools/call of the same tool: "
                      f"{statistics.median(direct):.2f} ms)")  # fmt: skip
                trips, size, _ = chain(session)
                chains = [chain(session)[2] * 1000 for _ in range(10)]
                _, program_bytes, planned = wire(session, "execute_code", {"code": PLAN})
                programs = [wire(session, "execute_code", {"code": PLAN})[0] * 1000 for _ in range(10)]
                print(f"meeting plan one by one: {trips} round trips, {size:,} bytes, "
                      f"{statistics.median(chains):.1f} ms (p50 of 10) plus the model's turn between each")  # fmt: skip
                print(f"meeting plan as one program: 1 round trip, {program_bytes:,} bytes, "
                      f"{statistics.median(programs):.1f} ms (p50 of 10); saved {trips - 1} round trips and "
                      f"{size - program_bytes:,} bytes ({100 * (size - program_bytes) / size:.0f}%)")  # fmt: skip
                print("  its result:", json.dumps(planned.get("result"), ensure_ascii=False))
            finally:
                session.close()


if __name__ == "__main__":
    main()
