"""The masker's numbers (toolsets/pipeline/audit/numbers.py): checked by python-stdnum and phonenumbers, which are
imported on the first number only and asked a bounded number of times per string."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolsets.pipeline.audit import numbers
from toolsets.pipeline.audit.masking import Masker

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(60)
def test_the_libraries_are_imported_on_the_first_number_only() -> None:
    code = (
        "import sys\n"
        "from toolsets.pipeline.audit.masking import Masker\n"
        "Masker().text('nothing to mask here, 2026-03-10')\n"
        "assert not {'phonenumbers', 'stdnum'} & set(sys.modules), 'imported early'\n"
        "assert Masker().text('010-1234-5678 4111 1111 1111 1111') == '[phone] [card]'\n"
        "assert {'phonenumbers', 'stdnum'} <= set(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=50, cwd=ROOT)


@pytest.mark.timeout(60)
def test_one_string_asks_the_libraries_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    checked = numbers._korean

    def counting(number: str) -> bool:
        asked.append(number)
        return checked(number)

    monkeypatch.setattr(numbers, "_korean", counting)
    text = "010-1234-5678 " * 2000
    started = time.perf_counter()
    masked = numbers.mask_numbers(text)
    assert time.perf_counter() - started < 0.2
    assert len(asked) == numbers.CHECKS
    assert masked == "[phone] " * 2000  # past the checks, the shape alone masks (never the other way)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("1 (212) 555-0123", "[phone]"),
        ("(212) 555-0123", "[phone]"),
        ("DE89 3704 0044 0532 0130 00", "[iban]"),
        ("GB82WEST12345698765432", "[iban]"),
        ("220-81-62517", "[brn]"),
        ("2125550123", "2125550123"),  # ten bare digits are an id as often as a phone: only written shapes count
        ("1 (212) 555-01234", "1 (212) 555-01234"),  # not a number the US assigns
        ("+1 (212) 555-0123", "[phone]"),
        ("010-1234-5678 010-2345-6789", "[phone] [phone]"),
        ("1 (212) 555-0123 ext 12", "[phone] ext 12"),
        ("order 2026 010-1234-5678", "order 2026 [phone]"),
        ("+1 415 555 2671 +44 20 7946 0958", "[phone] [phone]"),
    ],
)
def test_numbers_are_checked_not_guessed(text: str, masked: str) -> None:
    assert Masker().text(text) == masked
