"""Cross-language recall: Korean queries finding English passages and English queries finding Korean ones.

The held-out pairs of bench/bilingual_corpus.py (written without looking at the lexicon) are searched
through the real stores: every passage is a document of a temp docs folder (KnowledgeIndex) and a
memory of one user (the memory store), on SQLite and, with --database-url (or TEST_DATABASE_URL), on
PostgreSQL in a fresh schema. Each query must find its own passage among all of them (both languages):
recall@1, @3 and @5, with the lexicon's expansion off (the baseline: the analyzer alone) and on, at
each --weights value of an alternate term. Also lists the query words the lexicon has no entry for.
--set heldout runs the second held-out set (bench/bilingual_heldout.py) instead, --set both runs each.

    .venv/bin/python bench/bilingual_eval.py [--set first|heldout|both] [--database-url URL]
        [--weights 0.25,0.5,1] [--verbose] [--latency 10000]

--latency CHUNKS also times knowledge searches with the expansion off and on, interleaved, over ~CHUNKS
chunks of text mixing the lexicon's words with bench/knowledge_bench.py's synthetic vocabulary.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bilingual_corpus  # noqa: E402
import bilingual_heldout  # noqa: E402

from toolsets.infra.store.knowledge import KnowledgeIndex  # noqa: E402
from toolsets.infra.text import MAX_QUERY_TERMS, Analyzer, Query, fold  # noqa: E402
from toolsets.infra.text.crosslang import ALTERNATE_WEIGHT  # noqa: E402

TOP = 5
CUTOFFS = (1, 3, TOP)
USER = "eval-user"
Pair = tuple[str, str, str]  # direction, query, passage


def pairs_of(corpus: Any) -> list[Pair]:
    """(direction, query, passage) of a set's KO_EN and EN_KO lists."""
    return [("ko->en", query, passage) for query, passage in corpus.KO_EN] + [
        ("en->ko", query, passage) for query, passage in corpus.EN_KO
    ]


SETS: dict[str, list[Pair]] = {"first": pairs_of(bilingual_corpus), "heldout": pairs_of(bilingual_heldout)}
PAIRS = SETS["first"]
_STOP = "a an the to of for is are am do does did i my me you your how many much what when where who why get on in at"
STOP_WORDS = frozenset(f"{_STOP} with from not no too this that it be can there".split())


class Weighted(Analyzer):
    """The kept analyzer, its alternates weighed `weight` instead of the default."""

    def __init__(self, weight: float) -> None:
        super().__init__()
        self.weight = weight

    def query(self, text: str, limit: int = MAX_QUERY_TERMS) -> Query:
        return dataclasses.replace(super().query(text, limit), alternate_weight=self.weight)


@contextlib.asynccontextmanager
async def stores(kind: str, base: Path, url: str | None) -> AsyncIterator[tuple[Any, Any]]:
    """(knowledge tables, a function giving a memory store for an analyzer) of one backend."""
    if kind == "sqlite":
        from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables
        from toolsets.infra.store.memories.sqlite import SqliteMemories
        from toolsets.infra.store.sqlite.database import Database

        db = Database(base / "eval.sqlite3")
        try:
            yield SqliteKnowledgeTables(db), lambda text: SqliteMemories(db, text=text)
        finally:
            db.close()
        return
    assert url is not None
    from tests.support import fresh_schema
    from toolsets.infra.store.knowledge.postgres import PgKnowledgeTables
    from toolsets.infra.store.memories.postgres import PgMemories
    from toolsets.infra.store.postgres.database import PgDatabase

    with fresh_schema(url, prefix="bench") as schema:
        pg = PgDatabase(schema)
        try:
            yield PgKnowledgeTables(pg), lambda text: PgMemories(pg, text=text)
        finally:
            await pg.close()


async def evaluate(
    kind: str, base: Path, url: str | None, weights: list[float], pairs: list[Pair] = PAIRS, *, baseline: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    """Per analyzer variant: {store: {direction: ranks}} for knowledge and memories, and the misses."""
    docs = base / "docs"
    docs.mkdir(parents=True)
    passages = {f"p{number:02d}.txt": passage for number, (_, _, passage) in enumerate(pairs)}
    for name, passage in passages.items():
        (docs / name).write_text(passage, encoding="utf-8")
    variants: list[tuple[str, Analyzer]] = [("expansion off", Analyzer(cross_language=False))] if baseline else []
    variants += [(f"expansion on, weight {weight:g}", Weighted(weight)) for weight in weights]
    results: list[tuple[str, dict[str, Any]]] = []
    async with stores(kind, base, url) as (tables, memories_with):
        first = memories_with(variants[0][1])
        for passage in passages.values():
            await first.save(USER, passage, [])
        for label, text in variants:
            index = KnowledgeIndex(tables, docs, debounce=3600, text=text)
            memories = memories_with(text)
            ranks: dict[str, dict[str, list[int | None]]] = {}
            misses: list[str] = []
            for direction, query, passage in pairs:
                found = [hit.source for hit in await index.search(query, len(pairs))]
                remembered = [hit.record.content for hit in await memories.search(USER, query, len(pairs))]
                other = {text for d, _, text in pairs if d == direction}  # the passages in the other language
                for store, listed, wanted in (
                    ("knowledge", [passages[name] for name in found], passage),
                    ("memories", remembered, passage),
                ):
                    for corpus, candidates in (("", listed), ("*", [text for text in listed if text in other])):
                        rank = candidates.index(wanted) + 1 if wanted in candidates else None
                        ranks.setdefault(store + corpus, {}).setdefault(direction, []).append(rank)
                    if store == "knowledge" and listed[:1] != [wanted]:
                        rank_text = listed.index(wanted) + 1 if wanted in listed else "-"
                        top = listed[0] if listed else "-"
                        misses.append(f"  [{direction}] {query!r}: rank {rank_text}; first: {top[:60]!r}")
            results.append((label, {"ranks": ranks, "misses": misses}))
    return results


def recall(ranks: list[int | None], at: int) -> float:
    return sum(1 for rank in ranks if rank is not None and rank <= at) / len(ranks)


def uncovered_words(pairs: list[Pair] = PAIRS) -> dict[str, list[str]]:
    """Per direction, the query words (stop words aside) no lexicon entry found in the query covers."""
    text = Analyzer()
    out: dict[str, list[str]] = {}
    for direction, query, _ in pairs:
        spans: list[tuple[str, range]] = []
        terms: list[str] = []
        for word in re.findall(r"[^\W_]+", fold(query)):
            own = text.terms(word)
            spans.append((word, range(len(terms), len(terms) + len(own))))
            terms += own
        covered = {start + i for start, length, _ in text.lexicon.matches(terms) for i in range(length)}
        for word, positions in spans:
            if word not in STOP_WORDS and positions and not any(p in covered for p in positions):
                out.setdefault(direction, []).append(word)
    return {direction: sorted(set(words)) for direction, words in out.items()}


async def same_language(weights: list[float]) -> None:
    """bench/search_corpus.py's relevance set (mostly same-language queries) with the expansion off and on:
    what the expansion costs the ranking of same-language hits."""
    from search_eval import QUERIES, score, with_analyzer

    print(f"\nsame-language control: bench/search_corpus.py ({len(QUERIES)} queries), SQLite, recall@3 / MRR")
    variants: list[tuple[str, Analyzer]] = [("expansion off", Analyzer(cross_language=False))]
    variants += [(f"expansion on, weight {weight:g}", Weighted(weight)) for weight in weights]
    for label, text in variants:
        with tempfile.TemporaryDirectory(prefix="bilingual-control-") as tmp:
            knowledge, memory, _ = await with_analyzer(text, Path(tmp))
        scores = score(knowledge, memory)
        cells = "".join(f"{scores[k][0]:>9.3f} / {scores[k][1]:.3f}" for k in ("ko", "en", "mixed", "all"))
        print(f"{label:<30}{cells}   (ko, en, mixed, all)")


def report(kind: str, results: list[tuple[str, dict[str, Any]]], verbose: bool, pairs: list[Pair]) -> None:
    count = {d: sum(1 for direction, _, _ in pairs if direction == d) for d in ("ko->en", "en->ko")}
    print(f"\n{kind}: recall@1 / @3 / @5 over {len(pairs)} pairs (ko->en {count['ko->en']}, en->ko {count['en->ko']});")
    print("every passage of both languages is a candidate; * = ranked among the other language's passages only")
    header = f"{'':<30}{'store':<11}" + "".join(f"{d:>24}" for d in ("ko->en", "en->ko", "all"))
    print(header)
    print("-" * len(header))
    for label, found in results:
        for store, by_direction in found["ranks"].items():
            every = [rank for ranks in by_direction.values() for rank in ranks]
            cells = [
                " / ".join(f"{recall(ranks, at):.3f}" for at in CUTOFFS)
                for ranks in (by_direction["ko->en"], by_direction["en->ko"], every)
            ]
            print(f"{label:<30}{store:<11}" + "".join(f"{cell:>24}" for cell in cells))
    if verbose:
        for label, found in results:
            print(f"\nknowledge, {label}: not first for {len(found['misses'])}")
            print("\n".join(found["misses"]))


async def latency(kind: str, base: Path, url: str | None, chunks: int, rounds: int) -> None:
    """Query-time cost of the expansion: knowledge search p50/p99 with it off and on, interleaved in one
    process over one index of ~`chunks` chunks whose text mixes the lexicon's words (both languages)
    with knowledge_bench.py's synthetic vocabulary, for the eval's queries."""
    import random
    import statistics
    import time

    from knowledge_bench import SECTIONS_PER_FILE, attach, vocabulary

    from toolsets.infra.text.lexicon import PAIRS as LEXICON

    rng = random.Random(11)
    words, weights = vocabulary(rng)
    lexicon_words = [word for pair in LEXICON for word in pair]
    words, weights = lexicon_words + words, [1.0 / 50] * len(lexicon_words) + weights
    docs = base / "docs"
    docs.mkdir(parents=True)
    for number in range(max(1, chunks // SECTIONS_PER_FILE)):
        sections = [f"## {' '.join(rng.choices(words, k=2))}\n\n{attach(rng, rng.choices(words, weights, k=80))}\n"
                    for _ in range(SECTIONS_PER_FILE)]  # fmt: skip
        (docs / f"page-{number}.md").write_text(f"# Page {number}\n\n" + "\n".join(sections), encoding="utf-8")
    queries = [query for _, query, _ in SETS["first"] + SETS["heldout"]]
    async with stores(kind, base, url) as (tables, _):
        off = KnowledgeIndex(tables, docs, debounce=3600, text=Analyzer(cross_language=False))
        on = KnowledgeIndex(tables, docs, debounce=3600, text=Analyzer())
        stats = await off.refresh()
        await on.refresh()
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(rounds):
            for query in queries:
                for label, index in (("off", off), ("on", on)):
                    started = time.perf_counter()
                    await index.search(query, TOP)
                    samples[label].append((time.perf_counter() - started) * 1000)
    print(f"\n{kind}: knowledge search, {len(queries)} eval queries x {rounds}, {stats.chunks_written} chunks (ms)")
    for label, values in samples.items():
        p99 = sorted(values)[int(0.99 * (len(values) - 1))]
        print(f"  expansion {label:<4} p50 {statistics.median(values):7.2f}  p99 {p99:7.2f}")


async def main(url: str | None, weights: list[float], verbose: bool, chunks: int, chosen: str) -> None:
    kinds = ["sqlite", *(["postgresql"] if url else [])]
    names = list(SETS) if chosen == "both" else [chosen]
    for name in names:
        print(f"\n== set: {name} ==")
        for kind in kinds:
            with tempfile.TemporaryDirectory(prefix="bilingual-eval-") as tmp:
                report(kind, await evaluate(kind, Path(tmp), url, weights, SETS[name]), verbose, SETS[name])
    if chunks:
        for kind in kinds:
            with tempfile.TemporaryDirectory(prefix="bilingual-latency-") as tmp:
                await latency(kind, Path(tmp), url, chunks, rounds=5)
    await same_language(weights)
    for name in names:
        print(f"\nquery words no lexicon entry covers (stop words aside), set {name}:")
        for direction, words in uncovered_words(SETS[name]).items():
            print(f"  {direction} ({len(words)}): {', '.join(words)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=[*SETS, "both"], default="both", help="which held-out set(s)")
    parser.add_argument("--database-url", default=os.environ.get("TEST_DATABASE_URL"))
    parser.add_argument("--weights", default=f"{ALTERNATE_WEIGHT:g}", help="alternate weights, comma-separated")
    parser.add_argument("--verbose", action="store_true", help="list the queries whose passage was not first")
    parser.add_argument("--latency", type=int, default=0, metavar="CHUNKS", help="also time searches at ~CHUNKS")
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    anyio.run(main, args.database_url, weights, args.verbose, args.latency, args.set)
