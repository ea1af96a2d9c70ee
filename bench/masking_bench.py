"""Masker benchmark: milliseconds per 64 KiB of realistic mixed Korean/English text with some personal data (a
memory, a message), then milliseconds per `Masker().text(...)` (best of --repeat) for each hostile input of
tests/masking_hostile.py (64 KiB each: long runs of a pattern's own characters and nested separators).

Usage (from any cwd):
    python bench/masking_bench.py [--repeat 3] [--masking PATH]

`--masking PATH` measures another copy of toolsets/pipeline/audit/masking.py (e.g. main's, to compare).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.masking_hostile import HOSTILE, SIZE

# one paragraph in ten carries personal data; the rest is what most arguments are: prose, dates, amounts, ids
_PLAIN = (
    "다음 주 화요일 오후 3시에 디자인 리뷰가 있어요. Please move the 2026-03-10T10:00:00+09:00 sync to 11:30. ",
    "예산은 1,200,000원이고 참석자는 12명입니다. The Q3 report shows 12,450 users and 3.2% churn in 2025. ",
    "회의록: evt_3f9a1c2b7d4e4f5a8b6c 일정 확인, version 1.4.2 배포 완료, 주문번호 20260310123456 배송 중. ",
    "Remember to buy milk, eggs and 2 loaves of bread; 엄마 생신은 5월 8일이에요. Use a password manager. ",
)
_PERSONAL = (
    "민지 연락처 010-1234-5678, 메일 minji.kim@example.co.kr, 카드 4111 1111 1111 1111 로 결제. ",
    "Call John at +1 (415) 555-2671 or 1 (212) 555-0123; IBAN DE89 3704 0044 0532 0130 00, 사업자 220-81-62517. ",
)


def mixed_text(size: int = SIZE) -> str:
    """About `size` characters of mixed Korean/English prose, one paragraph in ten with personal data."""
    parts: list[str] = []
    length = index = 0
    while length < size:
        part = _PERSONAL[index // 10 % 2] if index % 10 == 9 else _PLAIN[index % len(_PLAIN)]
        parts.append(part)
        length += len(part)
        index += 1
    return "".join(parts)[:size]


def load_masker(path: str | None) -> Any:
    if path is None:
        from toolsets.pipeline.audit.masking import Masker

        return Masker
    spec = importlib.util.spec_from_file_location("masking_under_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Masker


def best_ms(masker_type: Any, text: str, repeat: int) -> float:
    masker_type().text(text[:100])  # lazy imports and first-use tables are not the text's cost
    best = float("inf")
    for _ in range(repeat):
        masker = masker_type()
        started = time.perf_counter()
        masker.text(text)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--masking", help="another masking.py to measure")
    args = parser.parse_args()
    masker_type = load_masker(args.masking)
    mixed = best_ms(masker_type, mixed_text(), args.repeat)
    print(f"{mixed:10.2f} ms  per 64 KiB of mixed Korean/English text with personal data", flush=True)
    total = 0.0
    for name, text in HOSTILE:
        ms = best_ms(masker_type, text, args.repeat)
        total += ms
        print(f"{ms:10.2f} ms  {name}", flush=True)
    print(f"{total:10.2f} ms  total ({len(HOSTILE)} hostile inputs)")


if __name__ == "__main__":
    main()
