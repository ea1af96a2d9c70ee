"""Masking what an audit line must not carry: secrets, credentials and personal contacts.

Three nets, applied to every string (keys and values) of a call's arguments:
1. a key that names a secret or a contact (`password`, `api_key`, `authorization`, `phone`, `email`, ...)
   has its whole value replaced;
2. values shaped like bearer tokens, JWTs, API keys, email addresses and phone numbers are replaced
   wherever they appear in free text (a memory, a message), and dates and times are left alone;
3. any value the server knows as a secret (its JWT secret, state keys, upstream keys) is replaced.
Then long strings are cut, and deep or long structures are bounded, so one call cannot bloat the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

MASKED = "[masked]"
MAX_STRING = 512  # characters of one string kept in a line
MAX_ITEMS = 50  # items of one list or object kept in a line
MAX_DEPTH = 8
_SCAN_LIMIT = 64 * 1024  # characters scanned per string: the rest is cut anyway

# A key naming a secret or a personal contact, compared without case or separators (`apiKey`, `api-key`).
_SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)|secret|token|apikey|accesskey|privatekey|signingkey|credential|authorization|cookie"
    r"|^auth$|^pin$|^otp$|phone|mobile|^tel$|telephone|email|^ssn$|rrn|residentnumber"
)

# Order matters: whole tokens before the shorter shapes that could match inside them.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "Bearer <token>", not "the bearer of": a token has a digit somewhere
    ("bearer", re.compile(r"(?i)\bbearer\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")),
    (
        "api_key",
        re.compile(
            r"\b(?:sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic, Stripe-style
            r"|AIza[0-9A-Za-z_-]{30,}"  # Google
            r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
            r"|xox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
            r"|AKIA[0-9A-Z]{16}"  # AWS access key id
            r"|(?:secret_|ntn_)[A-Za-z0-9]{30,}"  # Notion
            r"|(?:pk|rk|sk)_(?:live|test)_[A-Za-z0-9]{16,})"  # Stripe
        ),
    ),
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
    # Korean numbers: mobile 010-1234-5678 / 01012345678 / +82 10 1234 5678, landline 02-123-4567, 031-...;
    # never preceded or followed by a digit or a dash, so 2026-03-10 and 2026-03-10T09:00:00+09:00 stay.
    (
        "phone",
        re.compile(
            r"(?<![0-9A-Za-z_+-])(?:\+82[ .-]?\(?0?\)?[ .-]?|\(?0)"  # +82 (0)10 or 010
            r"(?:1[016789]|2|[3-6][1-5]|70|50[2-8])\)?[ .-]?\d{3,4}[ .-]?\d{4}"  # mobile, Seoul, regions, VoIP
            r"(?![0-9A-Za-z_-])"
        ),
    ),
    # Any other international number in E.164 style (+1 415 555 0100, +447911123456).
    ("phone", re.compile(r"(?<![0-9A-Za-z_+])\+[1-9]\d{0,2}(?:[ .-]?\d{2,5}){2,4}(?![0-9A-Za-z_-])")),
)


# Something any pattern above needs (a digit, an @, a key's prefix): text without one is left as it is.
_HINT = re.compile(r"[0-9@]|eyJ|sk-|AIza|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|secret_|ntn_|_live_|_test_")
_SHORT = 64  # strings up to this long (dates, enums, ids) repeat: their masked form is remembered
_SHORT_CACHE = 4096


class Masker:
    """Masks values for an audit line; `known_secrets` are the server's own secrets (replaced wherever seen)."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in known_secrets if len(s) >= 6}, key=len, reverse=True)
        self._short: dict[str, str] = {}

    def value(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, str):
            return self.text(value)
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
                name = self.text(str(key))
                masked[name] = (
                    MASKED if item not in (None, "") and is_secret_key(str(key)) else self.value(item, depth + 1)
                )
            return masked
        if isinstance(value, list | tuple | set | frozenset):
            items = list(value)
            kept = [self.value(item, depth + 1) for item in items[:MAX_ITEMS]]
            if len(items) > MAX_ITEMS:
                kept.append(f"[+{len(items) - MAX_ITEMS} more]")
            return kept
        return self.text(str(value))

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
        if _HINT.search(scanned):
            for kind, pattern in _PATTERNS:
                scanned = pattern.sub(f"[{kind}]", scanned)
        if len(scanned) > MAX_STRING or len(text) > _SCAN_LIMIT:
            return f"{scanned[:MAX_STRING]}...[{len(text)} chars]"
        return scanned


@lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(re.sub(r"[^a-z0-9]", "", key.lower())))
