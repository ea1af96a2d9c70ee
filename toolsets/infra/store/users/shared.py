"""The user directory's pure pieces, the same on every backend: what a user is found by, how a search
and a token's claims are read, how a row becomes a record, and how an identifier is resolved."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from toolsets.core.roles import Role
from toolsets.infra.contacts import normalize_email, normalize_phone
from toolsets.infra.store.errors import Conflict
from toolsets.infra.store.users.contract import UserRecord
from toolsets.infra.text import analyzer, strip_invisible
from toolsets.infra.text.romanize import name_spellings

if TYPE_CHECKING:
    import sqlite3


def name_terms(username: str | None, display_name: str | None) -> str:
    """What a user is found by: the analyzer's terms of their username and name, and Latin spellings
    of a Korean name."""
    text = analyzer()
    parts = [text.term_string(username or ""), text.term_string(display_name or "")]
    parts.extend(text.term_string(spelling) for spelling in name_spellings(display_name or ""))
    return " ".join(part for part in parts if part)


def search_needle(text: str) -> str | None:
    """What a username search looks for (`@` and invisible characters dropped); None when nothing is
    left to look for, so a search is never for "everyone"."""
    needle = strip_invisible(text).lstrip("@")
    return needle if any(char.isalnum() for char in needle) else None


def contains_pattern(needle: str) -> str:
    """A LIKE pattern for text containing `needle` literally (its wildcards escaped with `\\`)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def username_conflict(detail: object) -> Conflict:
    """The error of a write refused because a username is held by another id (nothing was written)."""
    return Conflict(f"{detail} (a username is already taken by another id?)")


def user_record(row: sqlite3.Row | Mapping[str, Any], groups: list[str]) -> UserRecord:
    """A `users` row and its group names as a record."""
    return UserRecord(
        id=row["id"],
        username=row["username"],
        display_name=row["display_name"],
        phone=row["phone"],
        email=row["email"],
        role=row["role"],
        groups=groups,
        timezone=row["timezone"],
        locale=row["locale"],
    )


def cleaned(user: UserRecord, country: str) -> UserRecord:
    """Contacts in their normal form; one that cannot be read is dropped rather than stored unusable."""
    phone = email = None
    if user.phone:
        with contextlib.suppress(ValueError):
            phone = normalize_phone(user.phone, country)
    if user.email:
        with contextlib.suppress(ValueError):
            email = normalize_email(user.email)
    given = user.model_fields_set  # kept as given: an import updates only the columns it names
    return user.model_copy(update={k: v for k, v in (("phone", phone), ("email", email)) if k in given})


# The columns an import may set; one it does not name keeps the stored value (a partial import, `id,username`).
IMPORTED_COLUMNS = ("username", "display_name", "phone", "email", "role", "timezone", "locale")


def replaced_columns(user: UserRecord) -> str:
    """The `SET` list of an import's upsert: the columns the record names (from the fixed list above)."""
    given = user.model_fields_set
    return "".join(f"{column} = excluded.{column}, " for column in IMPORTED_COLUMNS if column in given)


def replaces_groups(user: UserRecord) -> bool:
    return "groups" in user.model_fields_set


def from_claims(claims: Mapping[str, Any], role: Role, country: str) -> UserRecord:
    """A token's user (`sub`, `preferred_username`, `name`, `phone_number`, `email`), contacts cleaned."""
    return cleaned(
        UserRecord(
            id=str(claims["sub"]),
            username=_text(claims.get("preferred_username")),
            display_name=_text(claims.get("name")),
            phone=_text(claims.get("phone_number")),
            email=_text(claims.get("email")),
            role=role,
        ),
        country,
    )


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


class Lookups(Protocol):
    """The lookups `resolve_identifier` tries, in its order."""

    async def get(self, user_id: str) -> UserRecord | None: ...
    async def by_username(self, username: str) -> list[UserRecord]: ...
    async def find_by_contact(self, contact: str) -> list[UserRecord]: ...


async def resolve_identifier(store: Lookups, identifier: str) -> list[UserRecord]:
    """Users an identifier may name: an id, a username (with or without @), an email or a phone."""
    text = strip_invisible(identifier)
    if not text:
        return []
    by_id = await store.get(text)
    if by_id is not None:
        return [by_id]
    if "@" in text[1:]:
        return await store.find_by_contact(text)
    found = await store.by_username(text.lstrip("@"))
    if found:
        return found
    return await store.find_by_contact(text)  # a phone number; [] for anything else
