"""Masking of audit lines: every listed kind is replaced, dates and ordinary text are not."""

from __future__ import annotations

import pytest

from tests.audit_masking_corpus import CORPUS, MaskingCase
from toolsets.pipeline.audit.masking import MAX_ITEMS, MAX_STRING, Masker, is_secret_key

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsInJvbGUiOiJtZW1iZXIifQ.c2lnbmF0dXJlX2J5dGVzXzEyMzQ1"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("010-1234-5678", "[phone]"),
        ("01012345678", "[phone]"),
        ("010 1234 5678", "[phone]"),
        ("010.1234.5678", "[phone]"),
        ("+82 10 1234 5678", "[phone]"),
        ("+82-10-1234-5678", "[phone]"),
        ("+821012345678", "[phone]"),
        ("02-123-4567", "[phone]"),
        ("031-123-4567", "[phone]"),
        ("+1 415 555 0100", "[phone]"),
        ("민지 번호는 010-1234-5678입니다", "민지 번호는 [phone]입니다"),
        ("minji@example.com", "[email]"),
        ("Mail Minji.Kim+work@mail.example.co.kr today", "Mail [email] today"),
        ("김민지에게 minji@example.com으로", "김민지에게 [email]으로"),
        (JWT, "[jwt]"),
        (f"Authorization: Bearer {JWT}", "Authorization: [bearer]"),
        ("bearer abcdef123456", "[bearer]"),
        ("sk-proj-abcdefghijklmnopqrstuvwx", "[api_key]"),
        ("sk-ant-api03-abcdefghijklmnop", "[api_key]"),
        ("key=AIzaSyD-1234567890abcdefghijklmnopqrstu", "key=[api_key]"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[api_key]"),
        ("AKIAIOSFODNN7EXAMPLE", "[api_key]"),
    ],
)
def test_values_shaped_like_secrets_or_contacts_are_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-10",
        "2026-03-10T09:00:00+09:00",
        "2026-03-10T00:00:00Z",
        "from 2026-03-10 to 2026-03-12 (3 days), 10:00-11:30",
        "2026-03-09T00:00:00+09:00/2026-03-15T23:59:59+09:00",
        "20260310",
        "event_1234567890",
        "the bearer of good news",
        "회의실 예약 2026-03-10 14:00",
        "Basic research methods",
        "order 12345678901",
        "version 1.2.3",
    ],
)
def test_dates_times_and_plain_text_are_left_alone(text: str) -> None:
    assert Masker().text(text) == text


@pytest.mark.parametrize("case", CORPUS, ids=[f"{case.kind}:{case.text[:40]}" for case in CORPUS])
def test_the_corpus_masks_each_class_and_keeps_what_must_stay_readable(case: MaskingCase) -> None:
    assert Masker().text(case.text) == case.masked
    assert Masker().value({"note": case.text}) == {"note": case.masked}  # as an argument's value, too


def test_the_corpus_covers_every_class_in_korean_and_english_with_negatives() -> None:
    kinds = {case.kind for case in CORPUS}
    assert {"rrn", "card", "secret", "phone", "bearer", "keep"} <= kinds
    assert len(CORPUS) >= 40 and sum(case.kind == "keep" for case in CORPUS) >= 15
    korean = {case.kind for case in CORPUS if any("\uac00" <= char <= "\ud7a3" for char in case.text)}
    assert {"rrn", "card", "secret", "phone", "bearer", "keep"} <= korean


def test_a_masked_value_is_masked_once_and_known_secrets_still_win() -> None:
    secret = "s3cret-value-" + "y" * 20
    masker = Masker([secret])
    assert masker.text(f"password: {secret}") == "password: [masked]"
    assert masker.text("token: 010-1234-5678") == "token: [phone]"  # the phone is called what it is
    assert masker.text("pw=4111 1111 1111 1111") == "pw=[card]"


@pytest.mark.parametrize(
    "key",
    ["password", "Password", "db_passwd", "client_secret", "token", "access_token", "refreshToken", "api_key",
     "apiKey", "X-API-Key", "authorization", "Cookie", "phone", "phone_number", "mobile", "email", "emails",
     "private_key", "credentials", "비밀번호", "카드번호", "card_number", "cvc", "pw", "주민번호"],
)  # fmt: skip
def test_keys_naming_secrets_or_contacts_mask_their_whole_value(key: str) -> None:
    assert is_secret_key(key)
    assert Masker().value({key: "anything at all", "query": "lunch"}) == {key: "[masked]", "query": "lunch"}


@pytest.mark.parametrize("key", ["query", "title", "message", "date", "start_date", "author", "by", "user_id"])
def test_ordinary_keys_are_kept(key: str) -> None:
    assert not is_secret_key(key)


def test_secrets_the_server_knows_are_masked_wherever_they_appear() -> None:
    secret = "test-secret-" + "x" * 32
    masker = Masker([secret, "short"])  # under 6 characters: too common to replace
    assert masker.text(f"the key is {secret}!") == "the key is [masked]!"
    assert masker.text("a short note") == "a short note"


def test_nested_structures_are_masked_and_bounded() -> None:
    masked = Masker().value({"people": [{"email": "a@b.co", "note": "call 010-1234-5678"}], "n": 3, "ok": True})
    assert masked == {"people": [{"email": "[masked]", "note": "call [phone]"}], "n": 3, "ok": True}
    long = Masker().value({"items": list(range(MAX_ITEMS + 10))})["items"]
    assert len(long) == MAX_ITEMS + 1 and long[-1] == "[+10 more]"
    deep: object = "bottom"
    for _ in range(20):
        deep = [deep]
    assert "[too deep]" in str(Masker().value(deep))


def test_long_strings_are_truncated_after_masking() -> None:
    text = "minji@example.com " + "x" * 5000
    masked = Masker().text(text)
    assert masked.startswith("[email] xxx") and masked.endswith(f"...[{len(text)} chars]")
    assert len(masked) < MAX_STRING + 30
