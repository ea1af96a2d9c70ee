"""Masker benchmark on hostile input: milliseconds per `Masker().text(...)` (best of --repeat) for each input
of tests/masking_hostile.py (64 KiB each: long runs of a pattern's own characters and nested separators).

Usage (from any cwd):
    python bench/masking_bench.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.masking_hostile import HOSTILE
from toolsets.pipeline.audit.masking import Masker


def best_ms(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        masker = Masker()
        started = time.perf_counter()
        masker.text(text)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    total = 0.0
    for name, text in HOSTILE:
        ms = best_ms(text, args.repeat)
        total += ms
        print(f"{ms:10.2f} ms  {name}", flush=True)
    print(f"{total:10.2f} ms  total ({len(HOSTILE)} inputs)")


if __name__ == "__main__":
    main()
