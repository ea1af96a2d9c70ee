"""Search relevance: recall@3 and MRR of each text analyzer on the relevance set in search_corpus.py.

Every candidate runs through the real stores (KnowledgeIndex over a temp docs folder, SqliteMemories
with the corpus' memories for one user plus copies for three other users), each built with that
analyzer. "today" replays the search as it was before the analyzer (FTS5 `porter unicode61
remove_diacritics 2` over the raw text, each query word quoted and OR-ed), on the same chunks.

A query's relevant items may be document chunks, memories or both: the query runs against both,
recall@3 is the share of its relevant items found in the top 3 of their own list, and MRR averages
1/rank of the first relevant item over the lists it has relevant items in.

Kiwi (kiwipiepy) candidates are skipped, saying so, when kiwipiepy is not installed.

    .venv/bin/python bench/search_eval.py [--verbose]
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import anyio

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_corpus import DOCS, MEMORIES, QUERIES  # noqa: E402

from toolsets.infra.store.knowledge import KnowledgeIndex, parse_document  # noqa: E402
from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables  # noqa: E402
from toolsets.infra.store.memories.sqlite import SqliteMemories  # noqa: E402
from toolsets.infra.store.sqlite.database import Database  # noqa: E402
from toolsets.infra.text.analyzer import KEPT, Analyzer  # noqa: E402
from toolsets.infra.text.korean import KIWI  # noqa: E402

TOP = 3
USER = "eval-user"
OTHERS = ["other-1", "other-2", "other-3"]
Searcher = Callable[[str], "list[str]"]


# -- today's search, replayed ------------------------------------------------------------------

_OLD_TERM = re.compile(r"[^\W_]+")


def _old_match(text: str) -> str | None:
    terms = list(dict.fromkeys(_OLD_TERM.findall(unicodedata.normalize("NFC", text).lower())))[:32]
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


def legacy(docs: dict[str, str], memories: dict[str, str]) -> tuple[Searcher, Searcher]:
    conn = sqlite3.connect(":memory:")
    tokenizer = "porter unicode61 remove_diacritics 2"
    conn.execute(f"CREATE VIRTUAL TABLE k USING fts5(title, heading, body, ref UNINDEXED, tokenize='{tokenizer}')")
    conn.execute(
        f"CREATE VIRTUAL TABLE m USING fts5(content, tags, owner UNINDEXED, ref UNINDEXED, tokenize='{tokenizer}')"
    )
    for name, text in docs.items():
        title, _, chunks = parse_document(name, text)
        for chunk in chunks:
            conn.execute(
                "INSERT INTO k VALUES (?, ?, ?, ?)", (title, chunk.heading, chunk.body, f"{name}#{chunk.heading}")
            )
    for owner in [USER, *OTHERS]:
        for key, text in memories.items():
            conn.execute("INSERT INTO m VALUES (?, '[]', ?, ?)", (text, owner, f"memory:{key}"))

    def knowledge(query: str) -> list[str]:
        match = _old_match(query)
        if match is None:
            return []
        sql = "SELECT ref FROM k WHERE k MATCH ? AND rank MATCH 'bm25(4.0, 2.0, 1.0)' ORDER BY rank LIMIT ?"
        return [row[0] for row in conn.execute(sql, (match, TOP))]

    def memory(query: str) -> list[str]:
        match = _old_match(query)
        if match is None:
            return []
        sql = "SELECT ref FROM m WHERE m MATCH ? AND owner = ? ORDER BY bm25(m, 1.0, 0.5) LIMIT ?"
        return [row[0] for row in conn.execute(sql, (match, USER, TOP))]

    return knowledge, memory


# -- a candidate analyzer, through the real stores ---------------------------------------------


async def with_analyzer(text: Analyzer, base: Path) -> tuple[Searcher, Searcher, dict[str, float]]:
    docs_dir = base / "docs"
    docs_dir.mkdir(parents=True)
    for name, body in DOCS.items():
        (docs_dir / name).write_text(body, encoding="utf-8")
    db = Database(base / "eval.sqlite3")
    index = KnowledgeIndex(SqliteKnowledgeTables(db), docs_dir, debounce=3600, text=text)
    store = SqliteMemories(db, text=text)
    started = time.perf_counter()
    await index.refresh()
    for owner in [USER, *OTHERS]:
        for body in MEMORIES.values():
            await store.save(owner, body, [])
    indexed = time.perf_counter() - started
    by_content = {body: f"memory:{key}" for key, body in MEMORIES.items()}
    knowledge_results: dict[str, list[str]] = {}
    memory_results: dict[str, list[str]] = {}
    started = time.perf_counter()
    for query, _, _ in QUERIES:
        hits = await index.search(query, TOP)
        knowledge_results[query] = [f"{hit.source}#{hit.heading}" for hit in hits]
        memory_results[query] = [by_content[hit.record.content] for hit in await store.search(USER, query, TOP)]
    searched = time.perf_counter() - started
    db.close()
    timings = {"index_s": indexed, "search_ms": searched * 1000 / (2 * len(QUERIES))}
    return knowledge_results.__getitem__, memory_results.__getitem__, timings


# -- scoring -----------------------------------------------------------------------------------


def score(knowledge: Searcher, memory: Searcher, failures: list[str] | None = None) -> dict[str, tuple[float, float]]:
    per_language: dict[str, list[tuple[float, float]]] = {}
    for query, language, relevant in QUERIES:
        found, reciprocal = 0, []
        for results, wanted in (
            (knowledge(query), [r for r in relevant if not r.startswith("memory:")]),
            (memory(query), [r for r in relevant if r.startswith("memory:")]),
        ):
            if not wanted:
                continue
            found += sum(1 for r in wanted if r in results[:TOP])
            ranks = [results.index(r) + 1 for r in wanted if r in results]
            reciprocal.append(1 / min(ranks) if ranks else 0.0)
        recall = found / len(relevant)
        if failures is not None and recall < 1:
            failures.append(
                f"  [{language}] {query!r}: recall {recall:.2f}; knowledge {knowledge(query)} memory {memory(query)}"
            )
        for key in (language, "all"):
            per_language.setdefault(key, []).append((recall, statistics.fmean(reciprocal)))
    return {
        key: (statistics.fmean(r for r, _ in values), statistics.fmean(m for _, m in values))
        for key, values in per_language.items()
    }


async def main(verbose: bool) -> None:
    counts = {language: sum(1 for _, lang, _ in QUERIES if lang == language) for language in ("ko", "en", "mixed")}
    print(
        f"relevance set: {len(QUERIES)} queries (ko {counts['ko']}, en {counts['en']}, mixed {counts['mixed']}), "
        f"{len(DOCS)} documents, {len(MEMORIES)} memories (+ copies for {len(OTHERS)} other users); top {TOP}"
    )
    rows: list[tuple[str, dict[str, tuple[float, float]], str]] = []
    failures: dict[str, list[str]] = {}
    failures["today"] = []
    rows.append(("today: unicode61 + porter", score(*legacy(DOCS, MEMORIES), failures["today"]), "-"))
    for name in ("bigram", "bigram-strip", "kiwi", "kiwi-bigram"):
        if name.startswith("kiwi") and not KIWI.available():
            print(f"{name}: skipped (kiwipiepy is not installed; pip install kiwipiepy to measure it)")
            continue
        with tempfile.TemporaryDirectory(prefix="search-eval-") as tmp:
            knowledge, memory, timings = await with_analyzer(Analyzer(name), Path(tmp))
        failures[name] = []
        label = f"{name}{' (kept)' if name == KEPT else ''}"
        rows.append((label, score(knowledge, memory, failures[name]), f"{timings['index_s']:.2f} s"))
    if KIWI.load_seconds is not None:
        print(f"kiwipiepy load (first use, including its first analysis): {KIWI.load_seconds:.2f} s")
    header = f"{'analyzer':<28}" + "".join(
        f"{lang + ' R@3':>10}{lang + ' MRR':>10}" for lang in ("ko", "en", "mixed", "all")
    )
    print(header + f"{'index':>10}")
    print("-" * (len(header) + 10))
    for label, scores, indexed in rows:
        cells = "".join(f"{scores[lang][0]:>10.3f}{scores[lang][1]:>10.3f}" for lang in ("ko", "en", "mixed", "all"))
        print(f"{label:<28}{cells}{indexed:>10}")
    if verbose:
        for name, lines in failures.items():
            print(f"\nmissed by {name}: {len(lines)}")
            print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", action="store_true", help="list each analyzer's misses")
    anyio.run(main, parser.parse_args().verbose)
