"""Masking what an audit line must not carry: secrets, credentials and personal data.

Three nets, applied to every string (keys and values) of a call's arguments:
1. a key that names a secret or a contact (`password`, `api_key`, `authorization`, `phone`, `email`, `비밀번호`,
   ...) has its whole value replaced;
2. in free text (a memory, a message) values shaped like bearer tokens, JWTs, API keys, email addresses, IBANs,
   Korean resident and business registration numbers, card numbers and phone numbers (Korean and international,
   checked by python-stdnum and phonenumbers: numbers.py) are replaced, and so is the value after a word that
   names a secret (`password: ...`, `pw=...`, `token: ...`, `비밀번호는 ...`); dates, times, ids, hashes, versions
   and ordinary numbers are left alone;
3. any value the server knows as a secret (its JWT secret, state keys, upstream keys) is replaced.
Then long strings are cut, and deep or long structures are bounded, so one call cannot bloat the log.

Every pattern runs in time linear in the text (at most _SCAN_LIMIT characters of one string): no quantifier can
backtrack over text another quantifier has read, and the two shapes a regex alone would scan again from every
start (the local part of an e-mail address, the first segment of a JWT) are found by small scanners that read
each character a bounded number of times (tests/toolsets/test_masking_hostile.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolsets.pipeline.audit.numbers import mask_numbers

MASKED = "[masked]"
MAX_STRING = 512  # characters of one string kept in a line
MAX_ITEMS = 50  # items of one list or object kept in a line
MAX_DEPTH = 8
_SCAN_LIMIT = 64 * 1024  # characters scanned per string: the rest is cut anyway
# characters scanned per value (a call's arguments): audit lines are masked on the event loop, so one call's
# line costs it a few milliseconds at most; longer strings past it are not scanned, and not kept
VALUE_SCAN_LIMIT = 256 * 1024

# A key naming a secret or a personal contact, compared without case or separators (`apiKey`, `api-key`,
# `비밀번호`).
_SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)|secret|token|apikey|accesskey|privatekey|signingkey|credential|authorization|cookie"
    r"|^auth$|^pin$|^otp$|^pwd?$|phone|mobile|^tel$|telephone|email|^ssn$|rrn|residentnumber"
    r"|cardnumber|creditcard|^cardno$|^cvc$|^cvv$"
    r"|비밀번호|비번|암호|패스워드|주민|카드번호|전화|휴대폰|핸드폰|연락처|이메일"
)

# A word naming a secret, in free text: the word stays, the value after it is masked. After `:` or `=` (or
# English `is`/`was`) any value; after a bare space (or a Korean particle) only a value that looks like one:
# one with a digit after an English word (`password hunter2`, not `password manager`), one starting with an
# ASCII character after a Korean word (`비밀번호는 qwerty123`, not `비밀번호를 바꿨다`), never a date or a time.
_ENGLISH_WORD = (
    r"(?<![A-Za-z0-9])(?i:pass(?:word|wd|phrase)|pwd?|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|auth(?:orization)?|credentials?|pin|otp)(?![A-Za-z0-9])"
)
_STRONG_WORD = r"(?<![A-Za-z0-9])(?i:pass(?:word|wd|phrase))(?![A-Za-z0-9])"
_KOREAN_WORD = r"(?:비밀번호|비번|암호|패스워드|인증번호|보안코드|핀번호)"
_PARTICLE = r"(?:은|는|이|가|을|를|도)?"
_NOT_A_DATE = r"(?!\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2})"
_SECRET_VALUE = re.compile(
    r"(?=[PpSsTtAaCcOo비암패인보핀])"  # the words' first letters: lets the search skip ahead quickly
    r"(?P<word>"
    rf"{_ENGLISH_WORD}[\"']?(?:\s*[:=：]\s*|\s+(?i:is|was)\s+)"
    rf"|{_STRONG_WORD}\s+{_NOT_A_DATE}(?=\S*\d)"
    rf"|{_KOREAN_WORD}{_PARTICLE}[\"']?\s*[:=：]\s*"
    rf"|{_KOREAN_WORD}{_PARTICLE}\s*{_NOT_A_DATE}(?=[!-~])"
    r")"
    r"(?!\[[a-z_]+\])"  # masked already (`Authorization: [bearer]`)
    r"(?:\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'"  # a quoted value, whole
    r"|(?:(?:Basic|Bearer|Digest|Token)\s+)?\S*[^\s.,;:)\]}\"'])"  # else up to a space, less trailing stops
)

Replacement = str | Callable[[re.Match[str]], str]
Gate = Callable[[str, str], object]  # (text, text.lower()) -> whether a stage's patterns can match at all
Rewrite = Callable[[str], str]


def _sub(pattern: re.Pattern[str], replacement: Replacement) -> Rewrite:
    return functools.partial(pattern.sub, replacement)


# An e-mail address is `[A-Za-z0-9._%+-]+@domain`. As one regex, a search tries every start inside a long run of
# local-part characters and reads the run to its end each time (`"a" * 65535 + "@"`: quadratic). So the search
# finds each `@` with a local-part character before it and a domain after it (domains hold no `@`, so each
# character is read by one domain match), and the local part is read backwards from that `@`, never past the
# previous `@` or the previous address: the leftmost start a regex would take, with each character read once.
_EMAIL_AT = re.compile(r"(?<=[A-Za-z0-9._%+-])@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_LOCAL_PART = re.compile(r"[A-Za-z0-9._%+-]*")


def _mask_emails(text: str) -> str:
    pieces: list[str] = []
    copied = 0  # text before this is in `pieces` (or is a masked address)
    floor = 0  # a local part starts at or after this: after the previous `@` and the previous address
    for match in _EMAIL_AT.finditer(text):
        at = match.start()
        start = max(copied, floor)
        floor = at + 1
        local = _LOCAL_PART.match(text[start:at][::-1]).end()  # type: ignore[union-attr]  # `*` always matches
        if local:
            pieces.append(text[copied : at - local])
            pieces.append("[email]")
            copied = match.end()
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


# A JWT is `eyJ<5+>.<5+>.<any>` over [A-Za-z0-9_-]. As one regex, every `eyJ` inside a long run of those
# characters (`"eyJab-" * 10000`) reads the run to its end. When a start fails, so does every later one in the
# same run (it ends at the same character, only shorter), so the scan skips to the run's end.
_JWT_START = re.compile(r"\beyJ(?=[A-Za-z0-9_-]{5})")
_JWT_REST = re.compile(r"[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_-]*")


def _mask_jwts(text: str) -> str:
    pieces: list[str] = []
    copied = position = 0
    while start := _JWT_START.search(text, position):
        rest = _JWT_REST.match(text, start.end())
        if rest:
            pieces.append(text[copied : start.start()])
            pieces.append("[jwt]")
            copied = position = rest.end()
        else:
            position = _TOKEN_RUN.match(text, start.end()).end()  # type: ignore[union-attr]  # `*` always matches
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


_API_KEY_HINT = re.compile(r"sk-|AIza|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|secret_|ntn_|_live_|_test_")
_DIGIT = re.compile(r"\d")
_WORD_HINT = re.compile(
    r"pass|pw|pin|otp|secret|token|key|auth|credential|비밀번호|비번|암호|패스워드|인증번호|보안코드|핀번호"
)

# Stages in order, each with the hint it needs (checked once, so most text skips most patterns). Order matters:
# whole tokens before the shorter shapes that could match inside them, and the values after secret words
# last, so a card or a phone number there is still called what it is.
_STAGES: tuple[tuple[Gate, tuple[Rewrite, ...]], ...] = (
    # "Bearer <token>", not "the bearer of": a token has a digit, the shape of a JWT, or 20 characters
    (
        lambda text, lowered: "bearer" in lowered,
        (
            _sub(
                re.compile(
                    r"(?i:\bbearer)\s+(?=[A-Za-z0-9._~+/=-]*\d|[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]"
                    r"|[A-Za-z0-9._~+/=-]{20})[A-Za-z0-9._~+/=-]{5,}"
                ),
                "[bearer]",
            ),
        ),
    ),
    (
        lambda text, lowered: "eyJ" in text,
        (_mask_jwts,),
    ),
    (
        lambda text, lowered: _API_KEY_HINT.search(text),
        (
            _sub(
                re.compile(
                    r"\b(?:sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic, Stripe-style
                    r"|AIza[0-9A-Za-z_-]{30,}"  # Google
                    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
                    r"|xox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
                    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
                    r"|(?:secret_|ntn_)[A-Za-z0-9]{30,}"  # Notion
                    r"|(?:pk|rk|sk)_(?:live|test)_[A-Za-z0-9]{16,})"  # Stripe
                ),
                "[api_key]",
            ),
        ),
    ),
    (
        lambda text, lowered: "@" in text,
        (_mask_emails,),
    ),
    # IBANs, resident and business registration numbers, cards and phones (numbers.py: regexes find them, the
    # libraries check them)
    (lambda text, lowered: _DIGIT.search(text), (mask_numbers,)),
    (lambda text, lowered: _WORD_HINT.search(lowered), (_sub(_SECRET_VALUE, rf"\g<word>{MASKED}"),)),
)
_SHORT = 64  # strings up to this long (dates, enums, ids) repeat: their masked form is remembered
_SHORT_CACHE = 4096


class Masker:
    """Masks values for an audit line; `known_secrets` are the server's own secrets (replaced wherever seen)."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in known_secrets if len(s) >= 6}, key=len, reverse=True)
        self._short: dict[str, str] = {}

    def value(self, value: Any, depth: int = 0) -> Any:
        """`value` masked, scanning VALUE_SCAN_LIMIT characters of its strings (keys included) at most."""
        return self._value(value, depth, [VALUE_SCAN_LIMIT])

    def _value(self, value: Any, depth: int, budget: list[int]) -> Any:
        if isinstance(value, str):
            return self._budgeted(value, budget)
        if value is None or isinstance(value, bool | int | float):
            return value
        if depth >= MAX_DEPTH:
            return "[too deep]"
        if isinstance(value, Mapping):
            masked: dict[str, Any] = {}
            for index, (key, item) in enumerate(value.items()):
                if index == MAX_ITEMS:
                    masked["[more]"] = len(value) - MAX_ITEMS
                    break
                key = str(key)
                name = self._budgeted(key, budget)
                masked[name] = (
                    MASKED
                    if item not in (None, "") and is_secret_key(key[:_SCAN_LIMIT])
                    else self._value(item, depth + 1, budget)
                )
            return masked
        if isinstance(value, list | tuple | set | frozenset):
            items = list(value)
            kept = [self._value(item, depth + 1, budget) for item in items[:MAX_ITEMS]]
            if len(items) > MAX_ITEMS:
                kept.append(f"[+{len(items) - MAX_ITEMS} more]")
            return kept
        return self._budgeted(str(value), budget)

    def _budgeted(self, text: str, budget: list[int]) -> str:
        """`text` masked while the value's budget lasts; short strings (keys, ids, dates) cost microseconds, so
        they always are."""
        cost = min(len(text), _SCAN_LIMIT)
        if cost > _SHORT:
            if cost > budget[0]:
                budget[0] = 0
                return f"[{len(text)} chars not scanned]"
            budget[0] -= cost
        return self.text(text)

    def text(self, text: str) -> str:
        if len(text) > _SHORT:
            return self._mask(text)
        masked = self._short.get(text)
        if masked is None:
            if len(self._short) >= _SHORT_CACHE:
                self._short.clear()
            masked = self._short[text] = self._mask(text)
        return masked

    def _mask(self, text: str) -> str:
        scanned = text[:_SCAN_LIMIT]
        for secret in self._secrets:
            if secret in scanned:
                scanned = scanned.replace(secret, MASKED)
        lowered = scanned.lower()
        for gate, patterns in _STAGES:
            if gate(scanned, lowered):
                for rewrite in patterns:
                    scanned = rewrite(scanned)
        if len(scanned) > MAX_STRING or len(text) > _SCAN_LIMIT:
            return f"{scanned[:MAX_STRING]}...[{len(text)} chars]"
        return scanned


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(re.sub(r"[^a-z0-9가-힣]", "", key.lower())))
