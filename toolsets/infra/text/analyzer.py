"""The one text analyzer behind every search (knowledge chunks, memories, user names).

Text becomes a list of *terms*, the same way when a document is indexed and when a query is read,
so the index and the query always agree:

1. `fold`: NFKC + casefold (full-width forms, the Kelvin sign, `ß`... fold like everywhere else).
2. Words are runs of letters and digits (a hyphenated Latin compound, `Wi-Fi`, is also its joined word
   `wifi`, so either spelling finds the other); inside a word, runs of one script are handled apart, so a
   Latin word with a Korean particle attached (`KTX와`, `Zoom으로`) is the Latin word plus a particle.
3. Latin (and other alphabetic) runs lose diacritics and are Porter-stemmed (`meetings` -> `meet`),
   as SQLite's `porter unicode61 remove_diacritics 2` tokenizer did. A run the stemmer empties (the
   `s` of `Sora's`, `what's`, `%s`) is no term: a term is never empty, on any backend.
4. Korean (Hangul) runs, Han and kana: character bigrams (`회의실` -> `회의` `의실`), after a light
   strip of one trailing particle or ending (`팀장에게` -> `팀장`); a particle right after a Latin word
   or a number is dropped. Alternatives measured by `bench/search_eval.py` (Kiwi morphemes, Kiwi +
   bigrams) are selectable by name.

A query is also read in the other language (`query`): the bilingual lexicon adds the English terms of
its Korean words and back, as weaker *alternates* (`toolsets/infra/text/crosslang.py`); indexing is
untouched by it.

A store keeps the space-joined term string (`term_string`) in an FTS5 column whose tokenizer only
splits on spaces (`ascii`: every non-ASCII character is a token character and terms hold only letters
and digits), so the terms are the app's, not the database's: a PostgreSQL backend can store the same
string as a `tsvector` ('simple' configuration). Each analyzer has an `id`, stored with the terms;
when it changes, the stores re-analyze their rows (see `toolsets/infra/store/*`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from toolsets.infra.text.crosslang import MAX_ALTERNATES, Lexicon, Query
from toolsets.infra.text.korean import KIWI, PARTICLES, bigrams, is_cjk, is_hangul, strip_suffix
from toolsets.infra.text.normalize import fold

MAX_QUERY_TERMS = 64  # bounds the cost of one MATCH; bigrams make Korean queries term-rich

_WORD = re.compile(r"[^\W_]+")
# `Wi-Fi`, `e-mail`, `check-in`: a Latin compound is also its joined word, so `wifi` finds `Wi-Fi` and back
_COMPOUND = re.compile(r"[^\W_]+(?:[-\u2010][^\W_]+)+")
_JOINER = re.compile(r"[-\u2010]")
KEPT = "bigram-strip"  # measured best with bench/search_eval.py (docs/tools.md, "Search in Korean")


@functools.lru_cache(maxsize=1)
def _porter():
    import snowballstemmer  # small, pure Python; imported on first use so a session that never searches skips it

    return snowballstemmer.stemmer("porter")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of a folded alphabetic run (`meetings` -> `meet`); other runs pass unchanged."""
    if not word.isascii():
        stripped = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")
        word = unicodedata.normalize("NFC", stripped)
        if not word.isascii():
            return word
    if not any(c.isalpha() for c in word):
        return word
    return str(_porter().stemWord(word))


def _runs(word: str) -> list[tuple[str, str]]:
    """(script, run) pieces of one word: 'h' Hangul, 'c' Han/kana, 'o' anything else."""
    pieces: list[tuple[str, str]] = []
    for char in word:
        script = "h" if is_hangul(char) else "c" if is_cjk(char) else "o"
        if pieces and pieces[-1][0] == script:
            pieces[-1] = (script, pieces[-1][1] + char)
        else:
            pieces.append((script, char))
    return pieces


class Analyzer:
    """Text -> terms. `korean` picks how Hangul is cut: "bigram", "bigram-strip", "kiwi" or "kiwi-bigram";
    `cross_language` whether a query is also read in the other language (query time only: not in `id`)."""

    VERSION = 2  # bump when the rules change: stored terms are then rebuilt (2: hyphenated compounds joined)

    def __init__(self, korean: str = KEPT, *, cross_language: bool = True) -> None:
        if korean not in ("bigram", "bigram-strip", "kiwi", "kiwi-bigram"):
            raise ValueError(f"unknown Korean strategy {korean!r}")
        self.korean = korean
        self.cross_language = cross_language
        self.id = f"{korean}/{self.VERSION}"
        self.word_terms = functools.lru_cache(maxsize=65536)(self._word_terms)
        self.surface_terms = functools.lru_cache(maxsize=65536)(self._surface_terms)

    def __repr__(self) -> str:
        return f"Analyzer({self.korean!r}, cross_language={self.cross_language})"

    @functools.cached_property
    def lexicon(self) -> Lexicon:
        """The bilingual lexicon in this analyzer's terms (built on the first query that needs it)."""
        return Lexicon.build(self.terms)

    @property
    def uses_kiwi(self) -> bool:
        return self.korean.startswith("kiwi")

    # -- documents and queries ----------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        """Every term of `text` in order (repeats kept: they count for BM25)."""
        folded = fold(text)
        if self.uses_kiwi and any(is_hangul(c) for c in folded):
            return self._kiwi_terms(folded)
        out: list[str] = []
        for word in _WORD.findall(folded):
            out.extend(self.word_terms(word))
        if "-" in folded or "\u2010" in folded:
            for compound in _COMPOUND.findall(folded):
                joined = _JOINER.sub("", compound)
                if joined.isascii():
                    out.extend(self.word_terms(joined))
        return out

    def term_string(self, text: str) -> str:
        """The terms of `text` joined by spaces: what a store indexes."""
        return " ".join(self.terms(text))

    def query_terms(self, text: str, limit: int = MAX_QUERY_TERMS) -> list[str]:
        """The distinct terms of a query, in order; empty when it has nothing searchable."""
        return list(dict.fromkeys(self.terms(text)))[:limit]

    def query(self, text: str, limit: int = MAX_QUERY_TERMS) -> Query:
        """A search query: its own distinct terms, and their other-language alternates from the lexicon;
        at most `limit` terms in all, own terms first."""
        terms = self.terms(text)
        own = list(dict.fromkeys(terms))[:limit]
        if not self.cross_language or not own:
            return Query(tuple(own))
        alternates = self.lexicon.alternates(terms, min(MAX_ALTERNATES, limit - len(own)))
        return Query(tuple(own), tuple(alternates))

    def words(self, text: str) -> Iterable[re.Match[str]]:
        """Words of the *original* text (for snippets): runs of letters and digits."""
        return _WORD.finditer(text)

    # -- per word -------------------------------------------------------------------------------

    def _surface_terms(self, word: str) -> frozenset[str]:
        """Terms of one word as written in the original text (for highlighting; cached)."""
        return frozenset(term for folded in _WORD.findall(fold(word)) for term in self.word_terms(folded))

    def _word_terms(self, word: str) -> tuple[str, ...]:
        """Terms of one folded word (cached: words repeat)."""
        if self.uses_kiwi:
            return tuple(self._kiwi_terms(word)) if any(is_hangul(c) for c in word) else self._plain(word)
        return self._plain(word)

    def _plain(self, word: str) -> tuple[str, ...]:
        out: list[str] = []
        previous = ""
        for script, run in _runs(word):
            if script == "o":
                stemmed = stem(run)
                if stemmed:  # Porter turns a lone `s` into nothing; an empty term would match nothing (FTS5)
                    out.append(stemmed)  # or break the query (PostgreSQL's `''` is not a tsquery)
            elif script == "c":
                out.extend(bigrams(run))
            elif previous == "o" and run in PARTICLES:
                pass  # `KTX와`, `Zoom으로`, `3시에`: the particle of a Latin word or a number
            elif self.korean == "bigram-strip" or self.korean == "bigram":
                out.extend(bigrams(strip_suffix(run)) if self.korean == "bigram-strip" else bigrams(run))
            else:
                out.extend(bigrams(run))
            previous = script
        return tuple(out)

    def _kiwi_terms(self, folded: str) -> list[str]:
        out: list[str] = []
        for form, tag in KIWI.morphemes(folded):
            form = fold(form)
            if not form:
                continue
            if not any(is_hangul(c) for c in form):
                for word in _WORD.findall(form):
                    out.extend(self._plain(word))
                continue
            out.append(form)
            if self.korean == "kiwi-bigram" and tag in ("NNG", "NNP") and len(form) >= 3:
                out.extend(bigrams(form))  # compounds are also found by their parts (like nori's "mixed")
        return out


@functools.lru_cache(maxsize=8)
def analyzer(korean: str = KEPT) -> Analyzer:
    """The shared analyzer (the kept strategy unless another is named), reading queries in both languages."""
    return Analyzer(korean)
