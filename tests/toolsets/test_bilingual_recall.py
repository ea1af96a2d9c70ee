"""Cross-language recall stays at what the lexicon reached ("Korean at every edge"): bench/bilingual_eval.py on
SQLite, both held-out sets, Korean->English and English->Korean, recall@3 at least 0.85 each way, every passage
of both languages a candidate (knowledge and memories); and the grown lexicon still builds quickly."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from toolsets.infra.text import Analyzer
from toolsets.infra.text.crosslang import ALTERNATE_WEIGHT, Lexicon

pytestmark = pytest.mark.timeout(120)

BENCH = Path(__file__).resolve().parents[2] / "bench"
FLOOR = 0.85


def bench_eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bilingual_eval", BENCH / "bilingual_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bilingual_eval", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["first", "heldout"])
async def test_recall_at_3_is_at_least_085_each_way(tmp_path: Path, name: str) -> None:
    bench = bench_eval()
    started = time.perf_counter()
    results = await bench.evaluate("sqlite", tmp_path, None, [ALTERNATE_WEIGHT], bench.SETS[name], baseline=False)
    elapsed = time.perf_counter() - started
    [(_, found)] = results
    for store in ("knowledge", "memories"):
        for direction in ("ko->en", "en->ko"):
            recall = bench.recall(found["ranks"][store][direction], 3)
            assert recall >= FLOOR, (name, store, direction, recall, found["misses"])
    assert elapsed < 10, elapsed  # the whole eval, small enough to run as a test


def test_the_lexicon_builds_quickly() -> None:
    text = Analyzer()  # its own caches: every entry is analyzed afresh
    started = time.perf_counter()
    lexicon = Lexicon.build(text.terms)
    elapsed = time.perf_counter() - started
    assert len(lexicon) > 2000
    assert elapsed < 1.0, elapsed  # measured ~0.04 s on the 2-core CI machine
