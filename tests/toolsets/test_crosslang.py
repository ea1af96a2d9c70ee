"""Cross-language queries (Korean <-> English): the analyzer reads a query in the other language too, from the
bilingual lexicon and Korean given names; bounded, linear, query time only."""

from __future__ import annotations

import time

import pytest

from toolsets.infra.text import MAX_QUERY_TERMS, Analyzer, analyzer
from toolsets.infra.text.crosslang import MAX_ALTERNATES, Lexicon
from toolsets.infra.text.lexicon import GIVEN_NAMES, MAX_PAIRS, PAIRS

ENGLISH_STOP_WORDS = {"a", "an", "the", "of", "to", "for", "in", "on", "at", "and", "or", "is", "are", "from"}


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("회의", {"meet"}),
        ("회의실", {"meet", "room"}),
        ("회의실은 어디에 있나요?", {"meet", "room"}),
        ("저녁", {"dinner"}),
        ("팀 저녁 회식", {"dinner", "team"}),
        ("캘린더", {"calendar"}),
        ("일정", {"schedul"}),
        ("경비 정산", {"expens", "reimburs"}),
        ("사무실 주소", {"offic", "address"}),
        ("노트북", {"laptop"}),
        ("계정", {"account"}),
        ("초대", {"invit"}),
        ("공휴일", {"public", "holidai"}),
        ("출장", {"travel"}),
        ("온보딩", {"onboard"}),
        ("화상회의", {"video", "call"}),  # written without the space of the entry `화상 회의`
    ],
)
def test_a_korean_query_is_also_read_in_english(query: str, wanted: set[str]) -> None:
    found = analyzer().query(query)
    assert wanted <= set(found.alternates), found
    assert found.terms == tuple(analyzer().query_terms(query))  # its own terms are unchanged


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("meeting room", {"회의", "의실"}),
        ("Meetings", {"회의"}),
        ("dinner", {"저녁"}),
        ("the calendar admin", {"캘린", "관리"}),
        ("working hours", {"근무", "시간"}),
        ("expenses", {"비용", "경비"}),
        ("laptop", {"노트"}),
        ("invitations", {"초대"}),
        ("holidays", {"휴가"}),
    ],
)
def test_an_english_query_is_also_read_in_korean(query: str, wanted: set[str]) -> None:
    assert wanted <= set(analyzer().query(query).alternates)


@pytest.mark.parametrize(
    ("korean", "latin"),
    [("민지", "minji"), ("준호", "junho"), ("준호", "joonho"), ("소라", "sora"), ("하나", "hana"), ("지훈", "jihoon")],
)
def test_korean_given_names_and_their_latin_spellings_find_each_other(korean: str, latin: str) -> None:
    text = analyzer()
    assert latin in text.query(korean).alternates
    assert korean in text.query(latin.capitalize()).alternates
    assert latin in text.query(f"김{korean}에게").alternates  # a full name, with a particle
    assert korean in text.query(f"{latin.capitalize()} Kim").alternates


def test_a_query_no_entry_matches_is_searched_as_before() -> None:
    text = analyzer()
    for query in ("zebra crossing", "ktx와 zoom", "가나다라", "Zoom 3층"):
        found = text.query(query)
        assert found.alternates == () and list(found.terms) == text.query_terms(query)


def test_an_alternate_is_never_one_of_the_query_s_own_terms() -> None:
    found = analyzer().query("회의 meeting")
    assert found.terms == ("회의", "meet") and not set(found.alternates) & set(found.terms)


def test_without_cross_language_a_query_has_no_alternates_and_the_index_is_the_same() -> None:
    plain, both = Analyzer(cross_language=False), Analyzer()
    assert plain.query("회의실").alternates == ()
    assert plain.id == both.id  # query time only: stored terms stay valid, nothing is re-analyzed
    assert plain.terms("회의실 meeting room") == both.terms("회의실 meeting room")


def test_the_expansion_is_bounded() -> None:
    words = " ".join(korean for korean, _ in PAIRS)  # every entry of the lexicon in one query
    found = analyzer().query(words)
    assert len(found.alternates) <= MAX_ALTERNATES
    assert len(found.terms) + len(found.alternates) <= MAX_QUERY_TERMS
    short = analyzer().query("회의실 저녁 캘린더")
    assert len(short.alternates) <= MAX_ALTERNATES and short.alternates
    assert len(analyzer().query("회의 " * 5, limit=1).all_terms) == 1


def test_expansion_is_linear_in_the_query() -> None:
    text = analyzer()
    text.query("회의")  # the lexicon is built once, on first use
    hostile = "회의실 meeting room 민지 " * 20_000
    started = time.perf_counter()
    found = text.query(hostile)
    assert time.perf_counter() - started < 5.0
    assert len(found.all_terms) <= MAX_QUERY_TERMS


def test_the_lexicon_is_small_and_every_entry_has_terms_on_both_sides() -> None:
    text = Analyzer()
    assert len(PAIRS) + len(GIVEN_NAMES) <= MAX_PAIRS
    for korean, english in PAIRS:
        assert text.terms(korean) and text.terms(english), (korean, english)
        assert not set(english.lower().split()) & ENGLISH_STOP_WORDS, english
    assert len(set(PAIRS)) == len(PAIRS) and len(set(GIVEN_NAMES)) == len(GIVEN_NAMES)
    with pytest.raises(ValueError, match="at most"):
        Lexicon.build(text.terms, pairs=[("회의", "meeting")] * (MAX_PAIRS + 1), names=())


def test_a_lexicon_entry_matches_only_its_terms_in_a_row() -> None:
    lexicon = Lexicon([(["meet", "room"], ["회의실"]), (["room"], ["방"])])
    assert lexicon.alternates(["meet", "room"]) == ["회의실", "방"]
    assert lexicon.alternates(["room", "meet"]) == ["방"]  # `room meet` is not the entry `meeting room`
    assert lexicon.alternates(["meet", "x", "room"]) == ["방"]
    assert lexicon.alternates(["meet", "room"], limit=1) == ["회의실"]
