"""The shared store against the embedded one: search agreement, search latency, tool-call throughput.

    .venv/bin/python bench/db_bench.py [--database-url postgresql://postgres@127.0.0.1:5432/test]
        [--parts agreement,search,throughput] [--chunks 10000] [--sessions 16] [--seconds 10]

  * agreement: bench/search_corpus.py (67 queries over 9 documents and 22 memories) searched on SQLite
    (FTS5 bm25) and on PostgreSQL (tsvector + the BM25-like ranking of toolsets/infra/store/postgres/search.py):
    recall@3 / MRR of each, and how often the two top-3 lists hold the same results.
  * search: knowledge search p50/p99 at ~10k chunks (bench/knowledge_bench.py's synthetic corpus).
  * throughput: tool calls per second through 1, 2 and 4 `truloop-mcp --transport http` replicas, on one
    SQLite file (replicas share the --data-dir) and on one PostgreSQL, from `--sessions` concurrent MCP
    sessions (one user each, spread round-robin over the replicas) for `--seconds`, each session a mixed
    workload: 30% search_memories, 20% save_memory, 20% get_events, 10% create_event, 20% get_user_profile.

Every PostgreSQL run uses a fresh schema of the database given, dropped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydantic import SecretStr

from toolsets.infra.store.backend import StoreBackend, open_backend
from toolsets.infra.store.knowledge import KnowledgeIndex
from toolsets.infra.store.postgres.backend import PostgresBackend
from toolsets.infra.store.sqlite.backend import SqliteBackend
from toolsets.services import Services

TOP = 3


def fresh_schema(base: str) -> contextlib.AbstractContextManager[str]:
    from tests.support import fresh_schema as fresh

    return fresh(base, prefix="bench")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# -- agreement -------------------------------------------------------------------------------------


async def corpus_results(kind: str, base: Path, url: str | None) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    from search_corpus import DOCS, MEMORIES, QUERIES
    from search_eval import OTHERS, USER

    docs_dir = base / "docs"
    docs_dir.mkdir(parents=True)
    for name, body in DOCS.items():
        (docs_dir / name).write_text(body, encoding="utf-8")
    backend: StoreBackend = PostgresBackend(url) if url else SqliteBackend(base, file_name="eval.sqlite3")
    index = KnowledgeIndex(backend.knowledge_tables, docs_dir, debounce=3600)
    store = backend.memories
    await index.refresh()
    for owner in [USER, *OTHERS]:
        for body in MEMORIES.values():
            await store.save(owner, body, [])
    by_content = {body: f"memory:{key}" for key, body in MEMORIES.items()}
    knowledge: dict[str, list[str]] = {}
    memory: dict[str, list[str]] = {}
    for query, _, _ in QUERIES:
        knowledge[query] = [f"{hit.source}#{hit.heading}" for hit in await index.search(query, TOP)]
        memory[query] = [by_content[hit.record.content] for hit in await store.search(USER, query, TOP)]
    await backend.aclose()
    return knowledge, memory


async def agreement(url: str) -> None:
    from search_corpus import QUERIES
    from search_eval import score

    with tempfile.TemporaryDirectory() as tmp, fresh_schema(url) as schema:
        lite = await corpus_results("sqlite", Path(tmp) / "sqlite", None)
        post = await corpus_results("postgresql", Path(tmp) / "pg", schema)
    print("\nsearch agreement (bench/search_corpus.py, top 3)")
    print(f"{'backend':<12} {'korean':>15} {'english':>15} {'mixed':>15} {'all':>15}   (recall@3 / MRR)")
    for name, (knowledge, memory) in (("sqlite", lite), ("postgresql", post)):
        scores = score(knowledge.__getitem__, memory.__getitem__)
        cells = [f"{scores[k][0]:.3f} / {scores[k][1]:.3f}" for k in ("ko", "en", "mixed", "all") if k in scores]
        print(f"{name:<12} " + " ".join(f"{cell:>15}" for cell in cells))
    same_set = same_order = total = 0
    overlap: list[float] = []
    for query, _, _ in QUERIES:
        for side in (0, 1):
            a, b = lite[side][query], post[side][query]
            total += 1
            same_set += set(a) == set(b)
            same_order += a == b
            union = set(a) | set(b)
            overlap.append(len(set(a) & set(b)) / len(union) if union else 1.0)
    print(
        f"top-3 lists: same set {same_set}/{total}, same order {same_order}/{total}, "
        f"mean Jaccard overlap {statistics.mean(overlap):.3f}"
    )


# -- search latency ----------------------------------------------------------------------------------


async def search_latency(url: str, chunks: int, queries: int) -> None:
    from knowledge_bench import SECTIONS_PER_FILE, make_corpus, vocabulary

    rng = random.Random(7)
    words, weights = vocabulary(rng)
    print(f"\nknowledge search at ~{chunks} chunks, {queries} queries (ms)")
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        make_corpus(docs, chunks // SECTIONS_PER_FILE, rng, words, weights)
        asked = [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(queries)]
        for kind in ("sqlite", "postgresql"):
            with contextlib.ExitStack() as stack:
                schema = stack.enter_context(fresh_schema(url)) if kind == "postgresql" else None
                url_given = SecretStr(schema) if schema else None
                here = Path(tmp) / kind
                svc = Services(backend=open_backend(here, url_given), data_dir=here, docs_dir=docs)
                svc.knowledge.debounce = 3600
                started = time.perf_counter()
                await svc.knowledge.refresh()
                indexed = time.perf_counter() - started
                latencies = []
                for query in asked:
                    started = time.perf_counter()
                    await svc.knowledge.search(query, 5)
                    latencies.append((time.perf_counter() - started) * 1000)
                count = await svc.knowledge.chunk_count()
                await svc.aclose()
            print(
                f"{kind:<12} chunks {count:>6}  index {count / indexed:>7.0f} chunks/s  "
                f"p50 {statistics.median(latencies):6.2f}  p99 {percentile(latencies, 0.99):6.2f}"
            )


# -- throughput ------------------------------------------------------------------------------------------


async def session_load(base: str, user: str, seconds: float, counts: list[int], errors: list[str]) -> None:
    from tests.support import mcp_client, token

    rng = random.Random(user)
    year = time.gmtime().tm_year + 1
    async with mcp_client(base, token(sub=user, exp=int(time.time()) + 3600)) as client:
        await client.call_tool("get_user_profile", {})
        deadline = time.monotonic() + seconds
        done = 0
        while time.monotonic() < deadline:
            pick = rng.random()
            if pick < 0.3:
                name, args = "search_memories", {"query": rng.choice(["window seat", "meeting notes", "회의 일정"])}
            elif pick < 0.5:
                topic = rng.choice(["KTX", "회의", "budget"])
                name, args = "save_memory", {"content": f"note {done} about the {topic}"}
            elif pick < 0.7:
                name, args = "get_events", {"start": f"{year}-01-01T00:00:00+09:00"}
            elif pick < 0.8:
                day = rng.randint(1, 28)
                name, args = "create_event", {"title": f"sync {done}", "start": f"{year}-02-{day:02d}T10:00:00+09:00",
                                              "end": f"{year}-02-{day:02d}T11:00:00+09:00"}  # fmt: skip
            else:
                name, args = "get_user_profile", {}
            result = await client.call_tool(name, args)
            if result.is_error:
                errors.append(name)
            done += 1
        counts.append(done)


async def throughput_run(kind: str, replicas: int, sessions: int, seconds: float, url: str) -> tuple[float, int]:
    from tests.support import SECRET, child_env, spawn_http_server

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        env = child_env(TRULOOP_JWT_SECRET=SECRET, TRULOOP_STATE_KEYS="bench-shared-state-key-" + "k" * 24)
        if kind == "postgresql":
            env["DATABASE_URL"] = stack.enter_context(fresh_schema(url))
        bases = [stack.enter_context(spawn_http_server("--data-dir", str(Path(tmp) / "data"), env=env))
                 for _ in range(replicas)]  # fmt: skip
        counts: list[int] = []
        errors: list[str] = []
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for n in range(sessions):
                tg.start_soon(session_load, bases[n % replicas], f"bench-{n}", seconds, counts, errors)
        elapsed = time.perf_counter() - started
    return sum(counts) / elapsed, len(errors)


async def throughput(url: str, sessions: int, seconds: float) -> None:
    print(f"\ntool calls/s, {sessions} concurrent sessions, {seconds:g} s per run (mixed read/write)")
    print(f"{'replicas':>8} {'sqlite':>10} {'postgresql':>12}")
    for replicas in (1, 2, 4):
        row = []
        for kind in ("sqlite", "postgresql"):
            rate, errors = await throughput_run(kind, replicas, sessions, seconds, url)
            row.append(f"{rate:.0f}" + (f" ({errors} err)" if errors else ""))
        print(f"{replicas:>8} {row[0]:>10} {row[1]:>12}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("TEST_DATABASE_URL")
                        or "postgresql://postgres@127.0.0.1:5432/test")  # fmt: skip
    parser.add_argument("--parts", default="agreement,search,throughput")
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if "agreement" in parts:
        await agreement(args.database_url)
    if "search" in parts:
        await search_latency(args.database_url, args.chunks, args.queries)
    if "throughput" in parts:
        await throughput(args.database_url, args.sessions, args.seconds)


if __name__ == "__main__":
    anyio.run(main)
