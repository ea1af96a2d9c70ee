"""Korean for search: character bigrams over Hangul runs (no dependency, the way Lucene's CJK analyzer
works), a light particle/ending stripper, and the optional Kiwi morphological analyzer (`kiwipiepy`),
loaded lazily the first time Korean text is analyzed with it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

logger = logging.getLogger("truloop.text")


def is_hangul(char: str) -> bool:
    code = ord(char)
    return (
        0xAC00 <= code <= 0xD7A3  # syllables
        or 0x1100 <= code <= 0x11FF  # jamo
        or 0x3130 <= code <= 0x318F  # compatibility jamo
        or 0xA960 <= code <= 0xA97F
        or 0xD7B0 <= code <= 0xD7FF
    )


def is_cjk(char: str) -> bool:
    """Han ideographs and Japanese kana: no spaces between words either, so they are bigrammed too."""
    code = ord(char)
    return 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a run; a one-character run is kept whole (Lucene's CJKBigramFilter)."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


# Particles (josa) that attach to a noun, including a Latin word or a number ("KTX와", "Zoom으로").
PARTICLES = frozenset(
    """이 가 은 는 을 를 의 에 에서 에게 께 한테 로 으로 와 과 랑 이랑 하고 도 만 까지 부터 보다 처럼 마다 께서
    에게서 한테서 으로서 로서 으로써 로써 이나 나 이든 든 이라도 라도 조차 밖에 이다 다 이고 고 이며 며 요 이요 야 아
    에는 에서는 에게는 으로는 로는 와는 과는 에도 에서도 에게도 으로도 로도 까지는 부터는 만은 이란 란""".split()  # noqa: SIM905
)

# Endings and particles stripped from the end of a Hangul run before bigrams ("light stemming"), longest
# first; a run keeps at least two syllables.
_SUFFIXES = sorted(
    PARTICLES
    | frozenset(
        """됩니다 합니다 입니다 습니다 니다 했습니다 됐습니다 되었습니다 하였습니다 해요 돼요 예요 이에요 세요 하세요
        해주세요 주세요 했다 됐다 되었다 한다 된다 하는 되는 하고 되고 해서 돼서 하면 되면 했고 인데 는데 지만 으면 면
        어요 아요 었다 았다 였다 이었다 였어요 였다 이다 입니까 합니까 됩니까 할 될 한 된 함 됨 임""".split()  # noqa: SIM905
    ),
    key=len,
    reverse=True,
)


def strip_suffix(run: str) -> str:
    """`run` without one trailing particle or ending, when at least two syllables remain."""
    for suffix in _SUFFIXES:
        if len(run) - len(suffix) >= 2 and run.endswith(suffix):
            return run[: -len(suffix)]
    return run


# -- Kiwi (optional) -------------------------------------------------------------------------

# Content morphemes kept as terms: nouns, proper nouns, numerals, verb/adjective stems, roots, adverbs,
# foreign words, numbers, hanja, and Kiwi's special tokens (URLs, emails, hashtags, ...).
KIWI_KEEP = frozenset({"NNG", "NNP", "NR", "VV", "VA", "XR", "MAG", "SL", "SN", "SH", "NNB"})
_KIWI_DROP_NNB = frozenset({"것", "수", "등", "때", "중", "데", "뿐", "적", "바", "줄", "지"})


class KiwiUnavailableError(RuntimeError):
    """kiwipiepy is not installed."""


class LazyKiwi:
    """One Kiwi instance per process, built on first use; `load_seconds` says what the load cost."""

    def __init__(self) -> None:
        self._kiwi: Any = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    @staticmethod
    def available() -> bool:
        import importlib.util

        return importlib.util.find_spec("kiwipiepy") is not None

    def get(self) -> Any:
        if self._kiwi is None:
            with self._lock:
                if self._kiwi is None:
                    started = time.perf_counter()
                    try:
                        from kiwipiepy import Kiwi
                    except ImportError as missing:
                        raise KiwiUnavailableError("kiwipiepy is not installed (pip install kiwipiepy)") from missing
                    kiwi = Kiwi()
                    kiwi.tokenize("회의실 예약")  # the first call builds Kiwi's internal tables: count it as load
                    self.load_seconds = time.perf_counter() - started
                    logger.info("Korean morphological analyzer (kiwipiepy) loaded in %.2f s", self.load_seconds)
                    self._kiwi = kiwi
        return self._kiwi

    def morphemes(self, text: str) -> list[tuple[str, str]]:
        """(form, tag) of the content morphemes of `text`."""
        kept = []
        for token in self.get().tokenize(text):
            tag = token.tag.split("-")[0]
            if tag in KIWI_KEEP or tag.startswith("W_"):
                if tag == "NNB" and token.form in _KIWI_DROP_NNB:
                    continue
                kept.append((token.form, tag))
        return kept


KIWI = LazyKiwi()
