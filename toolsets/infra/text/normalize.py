"""Text normal forms shared by every search and comparison.

`fold` is the one canonical form of text for matching: Unicode NFKC (compatibility characters such
as the Kelvin sign or full-width letters become their plain forms) then case folding (which, unlike
`.lower()`, also folds `ß` to `ss` and Cyrillic, Greek... the same way in every place).
"""

from __future__ import annotations

import unicodedata

# Control, format, surrogate and private-use characters: never searchable, never part of a name.
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))


def fold(text: str) -> str:
    """NFKC + casefold: the form two strings are compared in ("Ｋelvin", "\u212aelvin" and "kelvin" agree)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def strip_invisible(text: str) -> str:
    """`text` with control/format characters (NUL, zero-width joiners, bidi marks...) replaced by spaces,
    runs of whitespace collapsed and the ends trimmed."""
    cleaned = "".join(" " if unicodedata.category(char) in _INVISIBLE else char for char in text)
    return " ".join(cleaned.split())


def canonical_key(text: str) -> str:
    """The identity of a name compared case-insensitively (a group name): folded, invisible characters
    dropped, inner whitespace collapsed."""
    return strip_invisible(fold(text))
