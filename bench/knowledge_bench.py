"""Knowledge index benchmark: indexing throughput and search latency at ~1k and ~10k chunks.

    .venv/bin/python bench/knowledge_bench.py [--sizes 1000,10000] [--queries 200]

For each size it writes a synthetic Markdown corpus (Zipf-distributed vocabulary of Latin-syllable
words and Hangul words with Korean particles attached, ~10 sections
per file, one chunk per section) into a temporary folder, then measures:
  * a full index (chunks/s),
  * a stat-only refresh with nothing changed (ms),
  * an incremental refresh after rewriting 1% of the files (chunks/s and ms),
  * search_knowledge_base latency through the dispatcher, p50/p99 (ms), with the default 2 s
    debounce (the realistic case) and with a rescan before every search (the worst case).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from toolsets.core.context import Caller, ToolContext
from toolsets.core.dispatch import dispatch
from toolsets.core.envelope import ToolOk
from toolsets.infra.store.sqlite.backend import SqliteBackend
from toolsets.profiles import build_profiles
from toolsets.services import Services

SECTIONS_PER_FILE = 10
WORDS_PER_SECTION = 80
SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "dan", "sho", "bel", "tor", "gin", "as"]
HANGUL = list("가나다라마바사아자차카타파하회의실장연차이월캘린더민지준호소라출장정책휴가예약")
PARTICLES = ["", "", "은", "는", "이", "가", "을", "를", "에서", "와", "에게", "으로"]


def vocabulary(rng: random.Random, size: int = 4000) -> tuple[list[str], list[float]]:
    latin = sorted({"".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))) for _ in range(size)})[: size // 2]
    hangul = sorted({"".join(rng.choices(HANGUL, k=rng.randint(2, 4))) for _ in range(size)})[: size // 2]
    words = latin + hangul
    rng.shuffle(words)
    return words, [1.0 / (rank + 1) for rank in range(len(words))]  # Zipf: a few words are very common


def attach(rng: random.Random, words: list[str]) -> str:
    return " ".join(w + rng.choice(PARTICLES) if "\uac00" <= w[0] <= "\ud7a3" else w for w in words)


def write_file(path: Path, rng: random.Random, words: list[str], weights: list[float], version: int = 0) -> None:
    title = " ".join(rng.choices(words[:500], k=2)).title()
    parts = [f"# {title}\n"]
    for section in range(SECTIONS_PER_FILE):
        level = "##" if section % 3 == 0 else "###"
        heading = " ".join(rng.choices(words[:800], k=rng.randint(1, 3))).capitalize()
        text = attach(rng, rng.choices(words, weights=weights, k=WORDS_PER_SECTION))
        parts.append(f"{level} {heading}\n\n{text} v{version}.\n")
    path.write_text("\n".join(parts), encoding="utf-8")


def make_corpus(root: Path, files: int, rng: random.Random, words: list[str], weights: list[float]) -> list[Path]:
    paths = []
    for n in range(files):
        folder = root / f"space-{n % 20:02}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"Page {n} {n:032x}.md"
        write_file(path, rng, words, weights)
        paths.append(path)
    return paths


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def search_latencies(svc: Services, queries: list[str]) -> list[float]:
    ctx = ToolContext(caller=Caller("bench"), deps=svc)
    toolset = build_profiles().profile("member")
    samples = []
    for query in queries:
        started = time.perf_counter()
        outcome = await dispatch(toolset, "search_knowledge_base", {"query": query, "limit": 5}, ctx)
        samples.append((time.perf_counter() - started) * 1000)
        if not isinstance(outcome, ToolOk):
            raise RuntimeError(f"search failed: {outcome}")
    return samples


async def bench_size(target_chunks: int, query_count: int, base: Path) -> dict[str, float]:
    rng = random.Random(target_chunks)
    words, weights = vocabulary(rng)
    files = max(1, target_chunks // SECTIONS_PER_FILE)
    docs = base / f"docs-{target_chunks}"
    paths = make_corpus(docs, files, rng, words, weights)
    data = base / f"data-{target_chunks}"
    backend = SqliteBackend(data)
    svc = Services(backend=backend, data_dir=data, docs_dir=docs)
    try:
        full = await svc.knowledge.refresh()
        idle = await svc.knowledge.refresh()

        changed = rng.sample(paths, max(1, files // 100))
        for path in changed:
            write_file(path, rng, words, weights, version=1)
        incremental = await svc.knowledge.refresh()

        queries = [attach(rng, rng.choices(words[:1500], k=rng.randint(1, 3))) for _ in range(query_count)]
        debounced = await search_latencies(svc, queries)
        svc.knowledge.debounce = 0
        rescanning = await search_latencies(svc, queries[: max(20, query_count // 4)])
        db_bytes = sum(p.stat().st_size for p in backend.path.parent.glob(f"{backend.path.name}*"))
    finally:
        svc.close()
    return {
        "files": files,
        "chunks": full.chunks_written,
        "full_s": full.seconds,
        "full_rate": full.chunks_written / full.seconds,
        "idle_ms": idle.seconds * 1000,
        "incr_files": incremental.files_indexed,
        "incr_chunks": incremental.chunks_written,
        "incr_ms": incremental.seconds * 1000,
        "incr_rate": incremental.chunks_written / incremental.seconds,
        "p50": statistics.median(debounced),
        "p99": percentile(debounced, 0.99),
        "rescan_p50": statistics.median(rescanning),
        "rescan_p99": percentile(rescanning, 0.99),
        "db_mb": db_bytes / 1e6,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="target chunk counts, comma-separated")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="knowledge-bench-") as tmp:
        for size in (int(value) for value in args.sizes.split(",")):
            r = await bench_size(size, args.queries, Path(tmp))
            print(
                f"{r['chunks']:>6} chunks / {r['files']:>5} files | "
                f"full index {r['full_s']:.2f} s = {r['full_rate']:,.0f} chunks/s | "
                f"no-change refresh {r['idle_ms']:.1f} ms | "
                f"1% changed ({r['incr_files']} files, {r['incr_chunks']} chunks) {r['incr_ms']:.1f} ms "
                f"= {r['incr_rate']:,.0f} chunks/s | "
                f"search p50 {r['p50']:.2f} ms p99 {r['p99']:.2f} ms "
                f"(rescan each time: p50 {r['rescan_p50']:.2f} p99 {r['rescan_p99']:.2f}) | "
                f"db {r['db_mb']:.1f} MB"
            )


if __name__ == "__main__":
    anyio.run(main)
