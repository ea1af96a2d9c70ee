"""Cross-language search: a query's words in the other language (Korean <-> English), from the lexicon.

Expansion happens at query time only: stored terms never change, so no store re-analyzes and every
backend gains it at once. Each lexicon entry whose terms stand in a row in the query's terms adds the
other side's terms as *alternates* (`회의실` -> `meet` `room`; `Minji` -> `민지`). Stores weigh an
alternate at `ALTERNATE_WEIGHT` of an own term, so a text in the query's own language that matches as
well ranks first, and a query no entry matches searches exactly as before.

Matching is one pass over the query's terms with a dict keyed by an entry's first term (each candidate
entry is compared once, and entries are at most `MAX_ENTRY_TERMS` long): linear in the query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from toolsets.infra.text.lexicon import GIVEN_NAMES, MAX_PAIRS, PAIRS
from toolsets.infra.text.romanize import given_name_spellings

ALTERNATE_WEIGHT = 0.5  # an alternate counts half an own term (bench/bilingual_eval.py)
MAX_ALTERNATES = 24  # alternates added to one query (the whole query stays within MAX_QUERY_TERMS)
MAX_ENTRY_TERMS = 6


@dataclass(frozen=True, slots=True)
class Query:
    """What a store searches for: the query's own terms, and the other language's, weighed lower."""

    terms: tuple[str, ...]
    alternates: tuple[str, ...] = ()
    alternate_weight: float = ALTERNATE_WEIGHT

    @property
    def all_terms(self) -> tuple[str, ...]:
        """Own terms then alternates (what a snippet highlights)."""
        return self.terms + self.alternates


class Lexicon:
    """Term sequences of one language -> term sequences of the other, both ways."""

    def __init__(self, entries: Iterable[tuple[Sequence[str], Sequence[str]]]) -> None:
        by_first: dict[str, dict[tuple[str, ...], dict[str, None]]] = {}
        for source, target in entries:
            key, found = tuple(source), tuple(target)
            if not key or not found or len(key) > MAX_ENTRY_TERMS or key == found:
                continue
            by_first.setdefault(key[0], {}).setdefault(key, {}).update(dict.fromkeys(found[:MAX_ENTRY_TERMS]))
        self._by_first = {
            first: tuple((key, tuple(targets)) for key, targets in keys.items()) for first, keys in by_first.items()
        }

    def __len__(self) -> int:
        return sum(len(keys) for keys in self._by_first.values())

    @classmethod
    def build(
        cls,
        terms_of: Callable[[str], list[str]],
        pairs: Sequence[tuple[str, str]] = PAIRS,
        names: Sequence[str] = GIVEN_NAMES,
    ) -> Lexicon:
        """The lexicon in the terms `terms_of` (the search analyzer) gives each side."""
        if len(pairs) + len(names) > MAX_PAIRS:
            raise ValueError(f"the lexicon holds at most {MAX_PAIRS} entries")
        entries: list[tuple[list[str], list[str]]] = []
        for korean, english in pairs:
            ours, theirs = terms_of(korean), terms_of(english)
            entries += [(ours, theirs), (theirs, ours)]
            if " " in korean:  # `화상 회의` is also written `화상회의`: found that way too
                entries.append((terms_of(korean.replace(" ", "")), theirs))
        for name in names:
            ours = terms_of(name)
            for spelling in given_name_spellings(name):
                theirs = terms_of(spelling)
                entries += [(ours, theirs), (theirs, ours)]
        return cls(entries)

    def matches(self, terms: Sequence[str]) -> Iterator[tuple[int, int, tuple[str, ...]]]:
        """(start, length, other-language terms) of every entry found in `terms`, in order."""
        for start, term in enumerate(terms):
            for key, targets in self._by_first.get(term, ()):
                if len(key) == 1 or tuple(terms[start : start + len(key)]) == key:
                    yield start, len(key), targets

    def alternates(self, terms: Sequence[str], limit: int = MAX_ALTERNATES) -> list[str]:
        """The other language's terms of every entry found in `terms` (in order), without the query's own
        terms; at most `limit`."""
        own = frozenset(terms)
        found: dict[str, None] = {}
        if limit <= 0:
            return []
        for _, _, targets in self.matches(terms):
            for target in targets:
                if target not in own:
                    found.setdefault(target, None)
                    if len(found) >= limit:
                        return list(found)
        return list(found)
