"""Latin spellings of Korean personal names, so `Minji Kim` finds `김민지`.

Syllables are romanized one by one (names are, in practice): the Revised Romanization and the older
popular spelling (`정` jeong/jung, `훈` hun/hoon, `영` yeong/young), and family names by their usual
passport spellings (`김` kim/gim, `이` lee/yi/rhee, `박` park/bak...). Best effort, for search only.
"""

from __future__ import annotations

from toolsets.infra.text.korean import is_hangul

_INITIAL = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_MEDIAL_RR = ["a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi",
              "yu", "eu", "ui", "i"]  # fmt: skip
_MEDIAL_POPULAR = ["a", "ae", "ya", "yae", "u", "e", "yu", "ye", "o", "wa", "wae", "oe", "yo", "oo", "wo", "we", "wi",
                   "yu", "eu", "ui", "i"]  # fmt: skip
_FINAL = ["", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p", "t", "t",
          "ng", "t", "t", "k", "t", "p", "t"]  # fmt: skip

# Usual passport spellings of common family names (the Revised Romanization is added to these).
SURNAMES: dict[str, tuple[str, ...]] = {
    "김": ("kim",), "이": ("lee", "yi", "rhee", "rhie"), "박": ("park", "pak"), "최": ("choi", "choe"),
    "정": ("jung", "chung", "jeong"), "강": ("kang",), "조": ("cho", "jo"), "윤": ("yoon", "yun"),
    "장": ("jang", "chang"), "임": ("lim", "im", "rim"), "한": ("han",), "오": ("oh",), "서": ("seo", "suh"),
    "신": ("shin", "sin"), "권": ("kwon",), "황": ("hwang",), "안": ("ahn", "an"), "송": ("song",),
    "류": ("ryu", "yoo", "yu"), "유": ("yoo", "yu"), "홍": ("hong",), "전": ("jeon", "jun", "chun"),
    "고": ("ko", "go"), "문": ("moon", "mun"), "양": ("yang",), "손": ("son", "sohn"), "배": ("bae",),
    "백": ("baek", "paik", "baik"), "허": ("heo", "huh", "hur"), "남": ("nam",), "심": ("shim", "sim"),
    "노": ("noh", "roh"), "하": ("ha",), "곽": ("kwak",), "성": ("sung", "seong"), "차": ("cha",),
    "주": ("joo", "ju"), "우": ("woo",), "구": ("koo", "gu"), "민": ("min",), "진": ("jin",), "지": ("ji",),
    "엄": ("um", "eom"), "채": ("chae",), "원": ("won",), "천": ("cheon", "chun"), "방": ("bang",),
    "공": ("kong",), "현": ("hyun",), "함": ("ham",), "변": ("byun",), "염": ("yeom",), "여": ("yeo",),
    "추": ("choo", "chu"), "도": ("do",), "석": ("seok",), "선": ("sun",), "설": ("seol", "sul"),
    "마": ("ma",), "길": ("gil", "kil"), "연": ("yeon",), "위": ("wi",), "표": ("pyo",), "명": ("myung",),
    "기": ("ki", "gi"), "반": ("ban",), "왕": ("wang",), "금": ("keum",), "옥": ("ok",), "육": ("yuk",),
    "인": ("in",), "맹": ("maeng",), "제": ("je",), "탁": ("tak",), "국": ("kook",), "나": ("na", "ra"),
    "남궁": ("namgung", "namkung"), "제갈": ("jegal",), "선우": ("sunwoo", "seonu"), "황보": ("hwangbo",),
    "독고": ("dokgo",),
}  # fmt: skip


def _syllable(char: str, medial: list[str]) -> str:
    code = ord(char) - 0xAC00
    if not 0 <= code < 11172:
        return ""
    vowel, final = (code % 588) // 28, code % 28
    if medial is _MEDIAL_POPULAR and vowel == 6 and final == 21:  # 영, 명, 경: young, myung, kyung
        return _INITIAL[code // 588] + "young"
    return _INITIAL[code // 588] + medial[vowel] + _FINAL[final]


def _spellings(syllables: str) -> set[str]:
    """The syllables run together, in the Revised Romanization and the popular spelling."""
    return {"".join(_syllable(c, table) for c in syllables) for table in (_MEDIAL_RR, _MEDIAL_POPULAR)} - {""}


def name_spellings(name: str) -> list[str]:
    """Latin spellings of a Korean name (`김민지` -> kim, gim, minji, min, ji, ...); [] for other names."""
    words = name.split()
    hangul = ["".join(c for c in word if is_hangul(c)) for word in words]
    hangul = [word for word in hangul if word]
    if not hangul:
        return []
    if len(hangul) == 1:  # `김민지`: family name first (two syllables for the compound ones)
        whole = hangul[0]
        if len(whole) < 2:
            family, given = "", whole
        else:
            size = 2 if len(whole) >= 4 and whole[:2] in SURNAMES else 1
            family, given = whole[:size], whole[size:]
    else:  # `김 민지` or `민지 김`: the one-syllable word is the family name
        family = next((word for word in hangul if word in SURNAMES and len(word) <= 2), hangul[0])
        given = "".join(word for word in hangul if word is not family)
    found: dict[str, None] = {}
    if family:
        for spelling in (*SURNAMES.get(family, ()), *sorted(_spellings(family))):
            found.setdefault(spelling, None)
    for spelling in sorted(_spellings(given)):
        found.setdefault(spelling, None)
    for char in given if len(given) > 1 else "":
        for spelling in sorted(_spellings(char)):
            found.setdefault(spelling, None)
    return list(found)


def latin_name(name: str) -> str | None:
    """How a one-word Korean name is usually written in Latin letters, family name first (`김민지` -> `Kim Minji`);
    None for other names."""
    hangul = "".join(c for c in name.strip() if is_hangul(c))
    if len(hangul) < 2 or hangul != name.strip():
        return None
    size = 2 if len(hangul) >= 4 and hangul[:2] in SURNAMES else 1
    family, given = hangul[:size], hangul[size:]
    family_latin = (SURNAMES.get(family) or ("".join(_syllable(c, _MEDIAL_RR) for c in family),))[0]
    given_latin = "".join(_syllable(c, _MEDIAL_RR) for c in given)
    return f"{family_latin.capitalize()} {given_latin.capitalize()}"


def given_name_spellings(given: str) -> list[str]:
    """Latin spellings of a Korean given name written alone (`준호` -> junho, joonho); [] when it is not Hangul."""
    if not given or not all(is_hangul(c) for c in given):
        return []
    return sorted(_spellings(given))
