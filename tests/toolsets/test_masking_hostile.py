"""The audit masker is linear-time: no hostile 64 KiB string (long runs of a pattern's own characters, nested
separators) costs it more than a few milliseconds, so an audit line never stalls the event loop it is rendered on.
The e-mail and JWT scanners mask exactly what their one-regex forms did."""

from __future__ import annotations

import random
import re
import time

import pytest

from tests.masking_hostile import HOSTILE, SIZE
from toolsets.pipeline.audit.masking import _SECRET_KEY, VALUE_SCAN_LIMIT, Masker, _mask_emails, _mask_jwts

LIMIT = 0.050  # seconds for one 64 KiB string, best of 3 (each takes a few ms; quadratic ones took seconds)


def best_of_3(call) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_a_hostile_string_is_masked_in_linear_time(name: str, text: str) -> None:
    assert len(text) >= SIZE * 0.95
    assert best_of_3(lambda: Masker().text(text)) < LIMIT, name


@pytest.mark.timeout(60)
@pytest.mark.parametrize("key", ["pas" * (SIZE // 3), "a@" * (SIZE // 2), "-_" * (SIZE // 2)])
def test_a_hostile_key_is_checked_in_linear_time(key: str) -> None:
    assert best_of_3(lambda: Masker().value({key: "x"})) < LIMIT
    assert best_of_3(lambda: _SECRET_KEY.search(key)) < LIMIT


def test_hostile_strings_are_still_masked() -> None:
    assert Masker().text("x@y.com " * 3) == "[email] [email] [email] "
    assert Masker().text("a" * 100 + "@example.com") == "[email]"
    assert Masker().text("eyJab-" * 3 + "eyJabcde.fghij.k z") == "[jwt] z"  # from the first eyJ, as before
    assert Masker().text("a@b.com@c.de@e.fr") == "[email]@[email]"


# The one-regex forms the scanners replace: quadratic on long runs, the reference on short text.
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")


def test_the_email_scanner_masks_what_the_regex_did() -> None:
    rng = random.Random(1)
    parts = ["a", "B", "1", "-", ".", "@", "%", "+", "_", "com", "x@y.co", " ", "한", "@a.b"]
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 20)))
        assert _mask_emails(text) == _EMAIL.sub("[email]", text), text


def test_the_jwt_scanner_masks_what_the_regex_did() -> None:
    rng = random.Random(2)
    parts = ["eyJ", "a", "Z", "9", "-", "_", ".", "eyJabcde.", "abcde.", " ", "한", "x"]
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 16)))
        assert _mask_jwts(text) == _JWT.sub("[jwt]", text), text


@pytest.mark.timeout(60)
def test_one_value_scans_a_bounded_number_of_characters() -> None:
    """Audit lines are masked on the event loop: a call's arguments scan VALUE_SCAN_LIMIT characters at most,
    and longer strings past it are replaced, not kept."""
    hostile = [text for _, text in HOSTILE[:20]]
    arguments = {"notes": hostile, "deep": [[hostile]], "last": "minji@example.com"}
    assert best_of_3(lambda: Masker().value(arguments)) < 4 * LIMIT
    masked = Masker().value(arguments)
    assert masked["last"] == "[email]"  # short strings are always masked
    unscanned = sum("chars not scanned" in note for note in masked["notes"])
    assert 20 - VALUE_SCAN_LIMIT // SIZE - 1 <= unscanned <= 20 - VALUE_SCAN_LIMIT // SIZE  # ~64 KiB each
    assert Masker().value({"note": "minji@example.com", "n": 3}) == {"note": "[email]", "n": 3}
