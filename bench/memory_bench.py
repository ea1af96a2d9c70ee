"""Memory search benchmark over the embedded store (SQLite FTS5, BM25).

Memories are written in a mixed vocabulary: Latin-syllable words and Hangul words with Korean
particles attached (`...은`, `...에서`), Zipf-distributed.

Many users (`--users 1000 --per-user 100`: 100k memories in one store):
  bulk load    memories inserted through the store's insert function, 1,000 per transaction; memories/s.
  save         --saves memories saved one by one through the backend (one transaction each); memories/s.
  backend      SqliteMemories.search(random user, query, 5); p50/p99 over --queries queries.
  dispatch     the same through dispatch(), the path every front takes.

One user (default; --sizes 1000 10000 memories for one user, in a fresh temp dir):
  insert       memories saved one by one through the backend (one transaction each); memories/s.
  backend      SqliteMemories.search(user, query, 5); p50/p99 over --queries queries.
  dispatch     dispatch(build_profiles().profile("member"), "search_memories", {...}, ctx): the path every front takes
               (argument validation, the tool, the result model); p50/p99 over the same queries.
Queries are 1-4 words drawn from the same skewed vocabulary as the memories, so common words
match many memories and rare ones few. Everything is seeded; the run stops early (and says so)
if it passes --budget seconds.

Usage (from any cwd):
    python bench/memory_bench.py [--sizes 1000 10000] [--queries 200] [--budget 110]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

from toolsets.core.context import Caller, ToolContext  # noqa: E402
from toolsets.core.dispatch import dispatch  # noqa: E402
from toolsets.core.envelope import ToolOk  # noqa: E402
from toolsets.infra.store.memories import MemoryRecord  # noqa: E402
from toolsets.infra.store.memories.sqlite import SqliteMemories, insert_memory, match_expression  # noqa: E402
from toolsets.infra.store.sqlite.backend import SqliteBackend  # noqa: E402
from toolsets.infra.store.sqlite.database import Database  # noqa: E402
from toolsets.profiles import build_profiles  # noqa: E402
from toolsets.services import Services  # noqa: E402

USER = "bench-user"
TAGS = ["food", "travel", "family", "work", "health", "music", "sport", "money"]
SYLLABLES = ["ka", "ri", "mo", "su", "te", "na", "lo", "pi", "ze", "vu", "ha", "do", "mi", "ra", "yo", "sen"]
HANGUL = list("가나다라마바사아자차카타파하회의실장연차이월캘린더민지준호소라출장정책휴가예약")
PARTICLES = ["", "", "은", "는", "이", "가", "을", "를", "에서", "와", "에게", "으로"]


@dataclass
class Row:
    size: int
    insert_per_s: float
    backend_p50: float
    backend_p99: float
    dispatch_p50: float
    dispatch_p99: float
    mean_hits: float
    mean_matched: float


def vocabulary(rng: random.Random, words: int = 3000) -> list[str]:
    """Half Latin-syllable words, half Hangul words (2-4 syllables), interleaved so both are common."""
    seen: dict[str, None] = {}
    while len(seen) < words:
        if len(seen) % 2:
            seen.setdefault("".join(rng.choice(HANGUL) for _ in range(rng.randint(2, 4))), None)
        else:
            seen.setdefault("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))), None)
    return list(seen)


def with_particles(rng: random.Random, words: list[str]) -> list[str]:
    return [w + rng.choice(PARTICLES) if "\uac00" <= w[0] <= "\ud7a3" else w for w in words]


def zipf_weights(count: int) -> list[float]:
    return [1.0 / (rank + 1) for rank in range(count)]


def memory_text(rng: random.Random, words: list[str], weights: list[float]) -> str:
    return " ".join(with_particles(rng, rng.choices(words, weights, k=rng.randint(8, 25)))).capitalize() + "."


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def timed(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    samples = []
    for call in calls:
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def run_size(size: int, query_count: int, deadline: float) -> Row | None:
    rng = random.Random(size)
    words = vocabulary(rng)
    weights = zipf_weights(len(words))
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        services = Services(backend=SqliteBackend(Path(tmp)), data_dir=Path(tmp), docs_dir=Path(tmp) / "docs")
        store = services.memories
        assert isinstance(store, SqliteMemories), "the bench measures the embedded store"
        await store.save(USER, "warm-up memory", [])  # creates the schema outside the timing
        texts = [memory_text(rng, words, weights) for _ in range(size)]
        tags = [rng.sample(TAGS, rng.randint(0, 2)) for _ in range(size)]

        start = time.perf_counter()
        for text, tag_list in zip(texts, tags, strict=True):
            await store.save(USER, text, tag_list)
            if time.perf_counter() > deadline:
                print(f"  size {size}: budget exhausted while inserting", file=sys.stderr)
                return None
        insert_per_s = size / (time.perf_counter() - start)

        queries = [" ".join(rng.choices(words, weights, k=rng.randint(1, 4))) for _ in range(query_count)]
        ctx = ToolContext(caller=Caller(USER), deps=services)
        member = build_profiles().profile("member")
        hit_counts: list[int] = []

        async def backend(query: str) -> None:
            hit_counts.append(len(await store.search(USER, query, 5)))

        async def through_dispatch(query: str) -> None:
            outcome = await dispatch(member, "search_memories", {"query": query, "limit": 5}, ctx)
            assert isinstance(outcome, ToolOk), outcome

        for query in queries[:10]:  # warm the page cache and the tool's lazily built models
            await backend(query)
            await through_dispatch(query)
        hit_counts.clear()
        backend_ms = await timed([lambda q=q: backend(q) for q in queries])
        dispatch_ms = await timed([lambda q=q: through_dispatch(q) for q in queries])
        matched = [await matching_rows(services, query) for query in queries]  # untimed: explains the cost
        services.close()
    return Row(
        size=size,
        insert_per_s=insert_per_s,
        backend_p50=statistics.median(backend_ms),
        backend_p99=percentile(backend_ms, 0.99),
        dispatch_p50=statistics.median(dispatch_ms),
        dispatch_p99=percentile(dispatch_ms, 0.99),
        mean_hits=statistics.fmean(hit_counts),
        mean_matched=statistics.fmean(matched),
    )


def store_db(services: Services) -> Database:
    """The embedded store's database (the bench runs on SQLite only)."""
    assert isinstance(services.backend, SqliteBackend)
    return services.backend.db


async def matching_rows(services: Services, query: str) -> int:
    """How many memories BM25 had to score for a query (every row that matches any of its words)."""
    expression = match_expression(USER, query)
    sql = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
    return int(await store_db(services).read(lambda conn: conn.execute(sql, (expression,)).fetchone()[0]))


def print_table(rows: list[Row], query_count: int) -> None:
    print(f"memory search, one user, limit 5, {query_count} queries per size (ms)")
    header = (
        f"{'memories':>9} {'insert/s':>9} {'backend p50':>12} {'backend p99':>12} "
        f"{'dispatch p50':>13} {'dispatch p99':>13} {'hits/query':>11} {'scored/query':>13}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.size:>9,} {row.insert_per_s:>9,.0f} {row.backend_p50:>12.3f} {row.backend_p99:>12.3f} "
            f"{row.dispatch_p50:>13.3f} {row.dispatch_p99:>13.3f} {row.mean_hits:>11.2f} {row.mean_matched:>13,.0f}"
        )


async def run_many_users(users: int, per_user: int, saves: int, query_count: int) -> None:
    rng = random.Random(users * per_user)
    words = vocabulary(rng)
    weights = zipf_weights(len(words))
    user_ids = [f"user-{n:05}" for n in range(users)]
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        services = Services(backend=SqliteBackend(Path(tmp)), data_dir=Path(tmp), docs_dir=Path(tmp) / "docs")
        store = services.memories
        assert isinstance(store, SqliteMemories), "the bench measures the embedded store"
        await store.save("warm-up", "warm-up memory", [])  # creates the schema outside the timing
        records = [
            (user, MemoryRecord(id=f"mem_{n}_{user}", content=memory_text(rng, words, weights),
                                tags=rng.sample(TAGS, rng.randint(0, 2)), created_at="2026-01-01T00:00:00+00:00"))
            for n in range(per_user) for user in user_ids
        ]  # fmt: skip
        start = time.perf_counter()
        for first in range(0, len(records), 1000):
            batch = records[first : first + 1000]

            def load(conn: object, batch: list[tuple[str, MemoryRecord]] = batch) -> None:
                for user, record in batch:
                    insert_memory(conn, user, record)  # type: ignore[arg-type]

            await store_db(services).write(load)
        bulk = len(records) / (time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(saves):
            await store.save(rng.choice(user_ids), memory_text(rng, words, weights), [])
        save_rate = saves / (time.perf_counter() - start)

        queries = [
            (rng.choice(user_ids), " ".join(with_particles(rng, rng.choices(words, weights, k=rng.randint(1, 4)))))
            for _ in range(query_count)
        ]
        member = build_profiles().profile("member")
        hit_counts: list[int] = []

        async def backend(user: str, query: str) -> None:
            hit_counts.append(len(await store.search(user, query, 5)))

        async def through_dispatch(user: str, query: str) -> None:
            ctx = ToolContext(caller=Caller(user), deps=services)
            outcome = await dispatch(member, "search_memories", {"query": query, "limit": 5}, ctx)
            assert isinstance(outcome, ToolOk), outcome

        for user, query in queries[:10]:
            await backend(user, query)
            await through_dispatch(user, query)
        hit_counts.clear()
        backend_ms = await timed([lambda u=u, q=q: backend(u, q) for u, q in queries])
        dispatch_ms = await timed([lambda u=u, q=q: through_dispatch(u, q) for u, q in queries])
        services.close()
    print(
        f"memory search, {users:,} users x {per_user} memories = {users * per_user:,}, "
        f"limit 5, {query_count} queries (ms)"
    )
    print(f"  bulk load {bulk:,.0f} memories/s; save() one by one {save_rate:,.0f} memories/s")
    print(f"  backend  p50 {statistics.median(backend_ms):.3f}  p99 {percentile(backend_ms, 0.99):.3f}")
    print(f"  dispatch p50 {statistics.median(dispatch_ms):.3f}  p99 {percentile(dispatch_ms, 0.99):.3f}")
    print(f"  hits/query {statistics.fmean(hit_counts):.2f}")


async def main(sizes: list[int], query_count: int, budget: float) -> None:
    deadline = time.perf_counter() + budget
    rows = []
    for size in sizes:
        row = await run_size(size, query_count, deadline)
        if row is None:
            break
        rows.append(row)
    print_table(rows, query_count)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--budget", type=float, default=110.0, help="stop after this many seconds")
    parser.add_argument("--users", type=int, default=0, help="many-users mode: this many users ...")
    parser.add_argument("--per-user", type=int, default=100, help="... with this many memories each")
    parser.add_argument("--saves", type=int, default=1000, help="many-users mode: single saves timed")
    args = parser.parse_args()
    if args.users:
        anyio.run(run_many_users, args.users, args.per_user, args.saves, args.queries)
    else:
        anyio.run(main, args.sizes, args.queries, args.budget)
