"""How people are named in a query: honorifics and titles around a name (`민지님`, `민지 씨`, `김민지 님`,
`준호 팀장님께`, `Mr. Park`) and the units of a person's name a stripped query must equal.

Stripping is only ever an alternative: a name search tries the text as written first, and a stripped form
counts only for a person one of whose name units it equals (`name_units`), never as part of a longer name, so
`김지양` (a real name ending in 양) is never read as `김지` and found as `김지호`.
"""

from __future__ import annotations

import functools

from toolsets.infra.text.korean import PARTICLES, is_hangul
from toolsets.infra.text.normalize import fold
from toolsets.infra.text.romanize import SURNAMES, name_spellings

# Said after a name, glued or as a word of their own.
HONORIFICS = ("님", "씨", "군", "양", "쌤")
# Job titles and forms of address: `팀장님` glued or spaced, `팀장` (without 님) only as a word of its own.
TITLES = frozenset(
    """팀장 과장 부장 대리 사장 교수 실장 차장 주임 이사 원장 선배 선생 회장 부회장 대표 전무 상무 본부장 센터장
    소장 국장 처장 위원 위원장 책임 수석 선임 연구원 매니저 프로 사원 기자 작가 감독 코치 박사 변호사
    간사 총무 반장 조교 강사 의원 파트장 그룹장 셀장 리더 팀원 후배 고객""".split()  # noqa: SIM905
)
_ENGLISH = frozenset(["mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam"])  # said before a name
_GLUED = tuple(sorted({*(f"{title}님" for title in TITLES), *HONORIFICS}, key=len, reverse=True))
_SPACED = tuple(sorted({*_GLUED, *TITLES}, key=len, reverse=True))
_PARTICLES = ("", *sorted(PARTICLES, key=len, reverse=True))
MAX_WORDS = 8  # a name query longer than this is not a name with a title
MIN_NAME = 2  # letters a stripped name keeps (`지양` is never `지`)


def _tails(word: str, alone: bool) -> list[str]:
    """`word` without a trailing honorific or title (and a particle after it), shortest removal first;
    `alone`: the word stands by itself, so a bare title or honorific may be the whole of it."""
    cores: dict[str, None] = {}
    for particle in _PARTICLES:
        if not word.endswith(particle):
            continue
        stem = word[: len(word) - len(particle)]
        for tail in _SPACED if alone else _GLUED:
            if stem.endswith(tail) and (stem != tail or alone):
                cores.setdefault(stem[: len(stem) - len(tail)], None)
    return sorted(cores, key=len, reverse=True)


@functools.lru_cache(maxsize=1024)
def without_honorifics(text: str) -> tuple[str, ...]:
    """The forms of a name query without its honorifics or titles, least stripped first (`준호 팀장님` ->
    `준호 팀장`, `준호`); () when it has none, or when what would remain is under two letters."""
    words = fold(text).split()
    if not words or len(words) > MAX_WORDS:
        return ()
    found: dict[str, None] = {}
    if len(words) > 1 and words[0].rstrip(".") in _ENGLISH:
        words = words[1:]
        found[" ".join(words)] = None
    frontier = [words]
    for _ in range(2):  # `준호 팀장 님`: two tails at most
        following = []
        for current in frontier:
            last, rest = current[-1], current[:-1]
            glued = any(is_hangul(char) for char in last) and len(last) > 1
            for core in _tails(last, alone=True if rest else not glued):
                remaining = [*rest, core] if core else rest
                if remaining:
                    following.append(remaining)
        for remaining in following:
            found.setdefault(" ".join(remaining), None)
        frontier = following
    original = " ".join(fold(text).split())
    return tuple(name for name in found if name != original and sum(char.isalnum() for char in name) >= MIN_NAME)


def name_units(username: str | None, display_name: str | None) -> frozenset[str]:
    """What a stripped name query must equal to name this person: the username, the name and each of its
    words, a Korean name's given name (`김민지` -> `민지`), and the Latin spellings of a Korean name."""
    units: set[str] = set()
    if username:
        units.add(fold(username))
    if display_name:
        name = fold(display_name)
        words = name.split()
        units.update(words)
        units.add("".join(words))
        units.add(" ".join(words))
        for word in words:
            if len(word) >= 3 and all(is_hangul(char) for char in word):
                units.add(word[2:] if len(word) >= 4 and word[:2] in SURNAMES else word[1:])
        units.update(name_spellings(display_name))
    return frozenset(unit for unit in units if unit)


def names_person(name: str, username: str | None, display_name: str | None) -> bool:
    """Whether a stripped name query (`민지`, `김민지`, `Minji Kim`) names this person as a whole, not as a part
    of a longer name."""
    units = name_units(username, display_name)
    words = fold(name).split()
    return bool(words) and ("".join(words) in units or " ".join(words) in units or all(w in units for w in words))
