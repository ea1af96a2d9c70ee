"""Snippets: the part of a text around the words that matched a query, those words in **bold**.

Computed from the original text (the index holds terms, not text): a word is a match when one of
its terms is a query term, so `회의실은` is shown bold for the query `회의`, `meetings` for `meeting`.
"""

from __future__ import annotations

from collections.abc import Collection

from toolsets.infra.text.analyzer import Analyzer

WINDOW_WORDS = 24
ELLIPSIS = "…"


def snippet(text: str, query_terms: Collection[str], analyzer: Analyzer, window: int = WINDOW_WORDS) -> str:
    """At most `window` words of `text` around the densest run of matches; matched words in **bold**."""
    wanted = frozenset(query_terms)
    spans = [(found.start(), found.end()) for found in analyzer.words(text)]
    if not spans:
        return text[:200]
    hits = [not wanted.isdisjoint(analyzer.surface_terms(text[s:e])) for s, e in spans]
    # the window with the most matched words (the earliest on a tie), by a running count
    best_start, best_score, score = 0, sum(hits[:window]), sum(hits[:window])
    for first in range(1, max(1, len(spans) - window + 1)):
        score += hits[first + window - 1] - hits[first - 1]
        if score > best_score:
            best_start, best_score = first, score
    chosen = range(best_start, min(len(spans), best_start + window))
    start = 0 if best_start == 0 else spans[best_start][0]
    end = len(text) if chosen[-1] == len(spans) - 1 else spans[chosen[-1]][1]
    pieces: list[str] = [ELLIPSIS] if start > 0 else []
    cursor = start
    for index in chosen:
        s, e = spans[index]
        if hits[index]:
            pieces.append(text[cursor:s])
            pieces.append(f"**{text[s:e]}**")
            cursor = e
    pieces.append(text[cursor:end])
    if end < len(text):
        pieces.append(ELLIPSIS)
    return "".join(pieces).strip()
