"""Phone numbers and email addresses in the one form they are stored and compared in.

Pure functions below both the store and the tools: an unreadable value raises ValueError (the store
treats it as "no such contact", `toolsets.assistant.validation` turns it into a message for the model).
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

DEFAULT_COUNTRY_CODE = "82"  # a national number (leading 0) is read as Korean

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE_SEPARATORS = re.compile(r"[\s\-().]")


class Contact(NamedTuple):
    kind: Literal["email", "phone"]
    value: str  # normalised: `+<digits>` or a lower-cased address


def normalize_email(value: str) -> str:
    """`Name@Example.COM` -> `name@example.com`."""
    text = value.strip().lower()
    if not _EMAIL.match(text):
        raise ValueError(f"not an email address: {value!r}")
    return text


def normalize_phone(value: str, default_country_code: str = DEFAULT_COUNTRY_CODE) -> str:
    """E.164-style `+<digits>`: `010-1234-5678`, `+82 10 1234 5678` and `0082 10 1234 5678` are all
    `+821012345678`; a national number (leading 0) gets the default country code."""
    text = _PHONE_SEPARATORS.sub("", value.strip())
    if text.startswith("00"):
        text = "+" + text[2:]
    if text.startswith("+"):
        digits = text[1:]
    elif text.startswith("0"):
        digits = default_country_code + text[1:]
    else:
        digits = text
    if not digits.isdigit() or not 7 <= len(digits) <= 15:
        raise ValueError(f"not a phone number: {value!r}")
    return "+" + digits


def parse_contact(value: str, default_country_code: str = DEFAULT_COUNTRY_CODE) -> Contact:
    """An email address or, failing that, a phone number; ValueError when it is neither."""
    try:
        return Contact("email", normalize_email(value))
    except ValueError:
        return Contact("phone", normalize_phone(value, default_country_code))


def parse_contact_or_none(value: str, default_country_code: str = DEFAULT_COUNTRY_CODE) -> Contact | None:
    try:
        return parse_contact(value, default_country_code)
    except ValueError:
        return None
