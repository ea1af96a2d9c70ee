"""Masking numbers that identify a person in free text: IBANs, Korean resident and business registration numbers,
card numbers and phone numbers (the audit masker's number stage, toolsets/pipeline/audit/masking.py).

Each kind is found in two steps. A linear-time regex finds candidates: numbers shaped like one, standing alone
(never inside an id, a hash or a version). Then a well-kept library decides: `python-stdnum` checks an IBAN's
mod-97 and length, a business registration number's parts (its check digit is computed here), a card number's
Luhn digit and a resident registration number's birth date; `phonenumbers` (libphonenumber) checks that a phone
number is one its country assigns. So the libraries only ever read short strings (a candidate is a few dozen
characters at most), and each string may ask them `CHECKS` times at most: past that, a candidate's shape alone
decides (masked), so a hostile string of thousands of phone-shaped numbers costs the event loop a few
milliseconds, not a second.

Resident registration numbers are not held to their check digit: numbers issued since October 2020 have none.
The libraries are imported on first use, never at server start.
"""

from __future__ import annotations

import re
from collections.abc import Callable

CHECKS = 256  # library checks per string (about 20 us each); past them a candidate's shape decides
PHONE_REGION = "KR"  # users' phones default to +82: a national number with its leading 0 is read as Korean

# Numbers and tokens are bounded by ASCII only: Korean text often touches a number (`010-1234-5678입니다`).
_START = r"(?<![0-9A-Za-z_.+-])"
_END = r"(?![0-9A-Za-z_]|-\d)"

# IBAN: country, check digits, then 11 to 30 letters and digits, in groups of four or not. Each character is one
# step of the repetition (a space before it or not), so a match is found in one pass and backtracks 30 steps at most.
_IBAN_HINT = re.compile(r"[A-Z]{2}\d{2}")
_IBAN = re.compile(r"(?<![0-9A-Za-z_])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![0-9A-Za-z_])")
_NUMBER_HINT = re.compile(r"\d{3}[ .-]?\d{4}|\d{2}-\d{5}|\+[1-9]|00[1-9]")
# Korean resident registration number: YYMMDD, then 1-8 (century and sex, or a foreigner's), 6 digits.
_RRN = re.compile(rf"{_START}\d{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-8]\d{{6}}{_END}")
# Korean business registration number, as it is written: 123-45-67890.
_BRN = re.compile(rf"{_START}\d{{3}}-\d{{2}}-\d{{5}}{_END}")
# Card numbers: 13-19 digits, whole or in groups (4-4-4-4[-3], Amex 4-6-5, Diners 4-6-4).
_CARD = re.compile(
    rf"{_START}[1-9](?:\d{{12,18}}"
    r"|\d{3}(?P<sep>[ -])\d{4}(?P=sep)\d{4}(?P=sep)\d{1,4}(?P<fifth>(?P=sep)\d{3})?"
    rf"|\d{{3}}(?P<amex>[ -])\d{{6}}(?P=amex)\d{{4,5}}){_END}"
)
# Phone numbers: `+` or `00` and a country code, or a national number; groups after the first need a separator (or
# follow a parenthesis), so digits split into groups one way only and a failed match backtracks a group at most.
_PHONE = re.compile(
    r"(?<![0-9A-Za-z_+.:/-])(?=\+?(?:[ .()-]{0,3}\d){7})"  # seven digits ahead (a bounded look), else no call
    r"(?:\+|00)?(?:\(\d{1,4}\)|\d{1,14}\)?)"
    r"(?:[ .-]?\(\d{1,4}\)|[ .-]\d{1,14}|(?<=\))\d{1,14}){0,7}"
    r"(?![0-9A-Za-z_]|-\d)"
)


_SEPARATORS = str.maketrans("", "", " .-()+")  # a phone candidate's characters that are not digits


class _Checks:
    """What one string may still ask the libraries; once spent, `ask` answers True (the shape decides)."""

    def __init__(self) -> None:
        self.left = CHECKS

    def ask(self, check: Callable[[str], object], candidate: str) -> bool:
        if self.left <= 0:
            return True
        self.left -= 1
        return bool(check(candidate))


def mask_numbers(text: str) -> str:
    """`text` with its IBANs, resident and business registration numbers, cards and phones replaced."""
    checks = _Checks()
    if _IBAN_HINT.search(text):
        text = _IBAN.sub(lambda match: _iban(match.group(), checks), text)
    if not _NUMBER_HINT.search(text):
        return text
    text = _RRN.sub(lambda match: "[rrn]" if checks.ask(_birth_date, match.group()) else match.group(), text)
    text = _BRN.sub(lambda match: "[brn]" if checks.ask(_brn, match.group()) else match.group(), text)
    text = _CARD.sub(lambda match: _card(match, checks), text)
    return _mask_phones(text, checks)


def _mask_phones(text: str, checks: _Checks) -> str:
    """Phone numbers, where a candidate may run into the next number (`010-1234-5678 010-2345-6789`, `1 (212)
    555-0123 ext 12`): its longest prefix that ends before a space and is a number is masked; when none is, the
    search goes on after its first word, so a number that starts later in it (`2026 010-1234-5678`) is found."""
    pieces: list[str] = []
    copied = position = 0
    while match := _PHONE.search(text, position):
        candidate = match.group()
        length = _longest_phone(candidate, checks)
        if length:
            pieces.append(text[copied : match.start()])
            pieces.append("[phone]")
            copied = position = match.start() + length
        else:
            space = candidate.find(" ")
            position = match.start() + (space if space > 0 else len(candidate))
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


def _longest_phone(candidate: str, checks: _Checks) -> int:
    """The length of the candidate's longest prefix that ends before a space and is a phone number, or 0."""
    assigned = _region_check(candidate)
    if assigned is None:
        return 0
    international = candidate.startswith("00")
    end = len(candidate)
    while end > 0:
        prefix = candidate[:end]
        digits = len(prefix.translate(_SEPARATORS)) - (2 if international else 0)
        if digits < 7:  # shorter runs are counts, codes and times far more often than phones
            return 0
        if digits <= 15 and checks.ask(assigned, "+" + prefix[2:] if international else prefix):  # E.164: 15 at most
            return end
        end = candidate.rfind(" ", 0, end)
    return 0


def _region_check(candidate: str) -> Callable[[str], bool] | None:
    """How a candidate starting so is checked: international (`+` or `00`), Korean with its trunk 0
    (`010-1234-5678`, `(02) 123-4567`), or North American (`1 (212) 555-0123`, `(212) 555-0123`). Other national
    shapes (`2026-03-10`, `978-3-16-148410-0`) are never read as phones."""
    if candidate.startswith(("+", "00")):
        return _international
    if candidate.startswith(("0", "(0")):
        return _korean
    if candidate.startswith("(") or (candidate.startswith("1") and candidate[1:2] in (" ", ".", "-", "(")):
        return _north_american
    return None


def _iban(candidate: str, checks: _Checks) -> str:
    """An IBAN, or one followed by a word in capitals (`... 0130 00 OK`): the last groups are dropped in turn."""
    from stdnum import iban

    kept = candidate
    for _ in range(3):
        if len(kept.replace(" ", "")) < 15:
            break
        if checks.ask(iban.is_valid, kept):
            return "[iban]" + candidate[len(kept) :]
        if " " not in kept:
            break
        kept = kept.rsplit(" ", 1)[0]
    return candidate


def _birth_date(candidate: str) -> bool:
    from stdnum.exceptions import ValidationError
    from stdnum.kr import rrn

    try:
        rrn.get_birth_date(candidate)
    except ValidationError:
        return False
    return True


_BRN_WEIGHTS = (1, 3, 7, 1, 3, 7, 1, 3, 5)


def _brn(candidate: str) -> bool:
    """stdnum checks a business registration number's parts (office 101 and up, no zero type or serial); its
    check digit, which stdnum leaves out, is the National Tax Service's weighted sum."""
    from stdnum.kr import brn

    if not brn.is_valid(candidate):
        return False
    digits = [int(char) for char in candidate if char != "-"]
    total = sum(d * w for d, w in zip(digits[:9], _BRN_WEIGHTS, strict=True)) + digits[8] * 5 // 10
    return (10 - total % 10) % 10 == digits[9]


def _card_network(digits: str) -> bool:
    """Whether a card network issues numbers starting so: Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37,
    Diners 300-305/36/38, JCB 35, Discover, UnionPay and Maestro 5x/6x, Korean domestic cards 9. An order
    number or a timestamp (`2026...`, `1...`) is none of them."""
    first = digits[0]
    if first in "4569":
        return True
    if first == "3":
        return digits[1] in "4578" or "300" <= digits[:3] <= "305"
    return first == "2" and "2221" <= digits[:4] <= "2720"


def _card(match: re.Match[str], checks: _Checks) -> str:
    """A card number when its digits have a network's prefix and pass the Luhn check; a trailing group of 3 (a
    19-digit card) may be something else (`4111 1111 1111 1111 123`): then the 16 digits before it are tried."""
    from stdnum import luhn

    text = match.group()
    digits = text.replace(" ", "").replace("-", "")  # the only separators the pattern takes
    if not _card_network(digits):
        return text
    if checks.ask(luhn.is_valid, digits):
        return "[card]"
    if match.group("fifth") and checks.ask(luhn.is_valid, digits[:-3]):
        return "[card]" + match.group("fifth")
    return text


def _international(number: str) -> bool:
    return _assigned(number, None)


def _korean(number: str) -> bool:
    return _assigned(number, PHONE_REGION)


def _north_american(number: str) -> bool:
    return _assigned(number, "US")


def _assigned(number: str, region: str | None) -> bool:
    import phonenumbers

    try:
        return bool(phonenumbers.is_valid_number(phonenumbers.parse(number, region)))
    except phonenumbers.NumberParseException:
        return False
