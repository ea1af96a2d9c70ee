"""How much of what a caller sent an answer or a log line ever repeats: a short prefix.

An error that names the caller's input (an unknown tool, a field, a method) quotes at most `ECHO_LIMIT`
characters of it and says how long it was, so an answer never grows with what was sent, and a log line neither.
"""

from __future__ import annotations

ECHO_LIMIT = 80


def echo(text: str, limit: int = ECHO_LIMIT) -> str:
    """`text`, or its first `limit` characters and its length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"
