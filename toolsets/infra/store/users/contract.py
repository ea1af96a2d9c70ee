"""The user directory's contract: the record it holds and the operations the tools and commands use.

`sqlite.SqliteUserStore` (the embedded store) and `postgres.PgUserStore` (the shared store) both
fulfil `UserStore`; the backend of the deployment picks one (`toolsets.infra.store.backend`).
"""

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, Field, field_validator

from toolsets.core.roles import Role
from toolsets.infra.text import canonical_key, strip_invisible


class UserRecord(BaseModel):
    id: str = Field(min_length=1, max_length=200)
    username: str | None = Field(default=None, max_length=100)
    display_name: str | None = Field(default=None, max_length=200)
    phone: str | None = None
    email: str | None = None
    # a lambda, not `list`: pydantic reads a factory's signature, and reading a builtin's costs ~10 ms at start
    groups: list[str] = Field(default_factory=lambda: [])
    role: Role = "member"
    timezone: str | None = Field(default=None, max_length=64)  # IANA; None: the token's, else the server's
    locale: str | None = Field(default=None, max_length=35)  # BCP 47; None: the token's, else the server's

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from toolsets.infra.locality import zone_or_none

        zone = zone_or_none(value)
        if zone is None:
            raise ValueError(f"timezone must be an IANA time zone such as Asia/Seoul or UTC; got {value!r}")
        return zone

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from toolsets.infra.locality import locale_or_none

        tag = locale_or_none(value)
        if tag is None:
            raise ValueError(f"locale must be a BCP 47 language tag such as ko-KR or en; got {value!r}")
        return tag

    @field_validator("username")
    @classmethod
    def _username(cls, value: str | None) -> str | None:
        value = (value or "").strip().lstrip("@")
        return value or None

    @field_validator("groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> list[str]:
        """Group names as given, one per canonical form (`Team` and `TEAM` are one group)."""
        if value is None or value == "":
            return []
        if isinstance(value, str):
            value = value.split(";")
        names: dict[str, str] = {}
        for group in value:
            name = strip_invisible(str(group))
            if name:
                names.setdefault(canonical_key(name), name)
        return sorted(names.values())


class UserStore(Protocol):
    """The user directory: ids, usernames, display names, contacts, groups, roles, zones and languages."""

    country: str  # the country code a phone number without one is read in (`+82` unless configured)

    async def import_users(self, users: Iterable[UserRecord]) -> int:
        """Insert or replace users (all of them, or none if one conflicts: `Conflict`)."""
        ...

    def import_users_sync(self, users: Iterable[UserRecord]) -> int:
        """The same, for the command line (no event loop)."""
        ...

    async def ensure_from_claims(self, claims: Mapping[str, Any], role: Role) -> None:
        """Enter a token's user on first authenticated use (`sub`, `preferred_username`, `name`, ...)."""
        ...

    async def is_empty(self) -> bool: ...

    async def get(self, user_id: str) -> UserRecord | None: ...

    async def get_many(self, user_ids: Iterable[str]) -> dict[str, UserRecord]: ...

    async def find_by_contact(self, contact: str) -> list[UserRecord]: ...

    async def find_by_username(self, text: str, limit: int) -> list[UserRecord]:
        """Users whose username or name contains `text`, or whose name has every word of it (`민지` and
        `Minji Kim` both find `김민지`): the exact username first, then by relevance."""
        ...

    async def by_username(self, username: str) -> list[UserRecord]:
        """The user with this username, compared without case."""
        ...

    async def group_members(self, group: str) -> list[UserRecord]:
        """Members of the group whose canonical name is `group`'s."""
        ...

    async def resolve(self, identifier: str) -> list[UserRecord]:
        """Users an identifier may name: an id, a username (with or without @), an email or a phone."""
        ...
