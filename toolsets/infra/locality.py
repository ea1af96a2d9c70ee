"""A user's zone and language: what a source states (a token, the directory), read leniently, and the machine's.

Each source may state either, both or neither; `None` means it does not, so the next one in the order decides
(`server.auth.identity` holds the order). Text that is not a zone or a language is read as not stated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolsets.core.context import Caller

DEFAULT_LOCALE = "en"
MAX_LOCALE = 35  # RFC 5646's longest well-formed tag a registry may need
_TAG = re.compile(
    r"(?P<language>[a-z]{2,3})"
    r"(?:-(?P<script>[a-z]{4}))?"
    r"(?:-(?P<region>[a-z]{2}|[0-9]{3}))?"
    r"(?P<rest>(?:-[a-z0-9]{1,8})*)",
    re.IGNORECASE,
)
_NOT_A_LANGUAGE = {"c", "posix"}


@dataclass(frozen=True, slots=True)
class Locality:
    """A zone (IANA) and a language (a BCP 47 tag) as one source states them; None where it does not."""

    timezone: str | None = None
    locale: str | None = None


def zone_or_none(value: object) -> str | None:
    """`value` as an IANA zone name (`Asia/Seoul`, `UTC`), or None when it is not one."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64 or text.startswith(("/", ".")) or ".." in text:
        return None
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
    return text


def locale_or_none(value: object) -> str | None:
    """`value` as a BCP 47 tag in its usual case (`ko-kr`, `ko_KR` -> `ko-KR`, `zh-hant-tw` -> `zh-Hant-TW`), or
    None when it is not one."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("_", "-")
    found = _TAG.fullmatch(text) if 0 < len(text) <= MAX_LOCALE else None
    if found is None or found["language"].lower() in _NOT_A_LANGUAGE:
        return None
    parts = [found["language"].lower()]
    if found["script"]:
        parts.append(found["script"].title())
    if found["region"]:
        parts.append(found["region"].upper())
    return "-".join(parts) + found["rest"].lower()


def machine_locale(environ: Mapping[str, str]) -> str:
    """The language of this machine's locale (LC_ALL, then LC_MESSAGES, then LANG, as POSIX reads them):
    `ko_KR.UTF-8` -> `ko-KR`; `C`, `POSIX`, unset or unreadable -> `en`."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            return locale_or_none(value.split(".", 1)[0].split("@", 1)[0]) or DEFAULT_LOCALE
    return DEFAULT_LOCALE


def located(claims: Mapping[str, Any], listed: Locality, default: Caller) -> Caller:
    """`default` in its zone and language: the first source that states each wins, in this order (the one place
    that holds it, docs/sign-in.md "Zone and language"):

    1. the token's `zoneinfo` and `locale` claims (OpenID Connect's; one that is not a zone or a tag is ignored);
    2. the user directory's `timezone` and `locale` (`listed`);
    3. `--timezone` and `--locale`, which default to the machine's zone and language: `default`'s own.
    """
    return replace(
        default,
        timezone=zone_or_none(claims.get("zoneinfo")) or listed.timezone or default.timezone,
        locale=locale_or_none(claims.get("locale")) or listed.locale or default.locale,
    )
