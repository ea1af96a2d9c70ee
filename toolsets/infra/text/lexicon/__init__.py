"""The bilingual lexicon of cross-language search: Korean and English words of a team's working life.

Plain data: (Korean, English) pairs, each read both ways (a Korean query also looks for the English
word, an English query for the Korean one), and Korean given names, whose Latin spellings come from
`romanize`. A word with several translations has several pairs. Entries are nouns (and a few verb or
adjective stems: `잃어버` lose, `고장` broken) as a wiki or a memory would write them; English sides have
no stop words, and a one-syllable Korean side (`팀`) only meets a word of its own (the analyzer keeps at
least two syllables when it strips a particle). `crosslang.Lexicon` turns them into terms with the
search analyzer.

The pairs are `core` (the first list) and one list per domain of office life (`domains/`), each written
from general knowledge of that domain's vocabulary, never from an evaluation's queries: the held-out sets
of bench/bilingual_eval.py measure whether the lists reach words nobody chose for them.
"""

from __future__ import annotations

from toolsets.infra.text.lexicon.core import CORE, GIVEN_NAMES
from toolsets.infra.text.lexicon.domains import DOMAINS

PAIRS: tuple[tuple[str, str], ...] = CORE + tuple(pair for pairs in DOMAINS.values() for pair in pairs)
MAX_PAIRS = 2000  # the lexicon stays small: every entry is analyzed once per process (bench: build time)

__all__ = ["GIVEN_NAMES", "MAX_PAIRS", "PAIRS"]
