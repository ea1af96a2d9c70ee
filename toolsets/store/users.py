"""The user directory: ids, usernames, display names, contacts, groups and roles."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from toolsets.store.db import Database
from toolsets.validation import normalize_email, normalize_phone

MIGRATIONS = [
    """
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        username TEXT UNIQUE COLLATE NOCASE,
        display_name TEXT,
        phone TEXT,
        email TEXT,
        role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'guest')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX users_phone ON users(phone);
    CREATE INDEX users_email ON users(email);
    CREATE TABLE user_groups (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        group_name TEXT NOT NULL COLLATE NOCASE,
        PRIMARY KEY (user_id, group_name)
    );
    CREATE INDEX user_groups_group ON user_groups(group_name);
    """
]

Role = Literal["member", "guest"]


class UserRecord(BaseModel):
    id: str = Field(min_length=1, max_length=200)
    username: str | None = Field(default=None, max_length=100)
    display_name: str | None = Field(default=None, max_length=200)
    phone: str | None = None
    email: str | None = None
    groups: list[str] = Field(default_factory=list)
    role: Role = "member"

    @field_validator("username")
    @classmethod
    def _username(cls, value: str | None) -> str | None:
        value = (value or "").strip().lstrip("@")
        return value or None

    @field_validator("groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> list[str]:
        if value is None or value == "":
            return []
        if isinstance(value, str):
            value = value.split(";")
        return sorted({str(group).strip() for group in value if str(group).strip()})


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class UserStore:
    def __init__(self, db: Database, *, default_country_code: str = "82") -> None:
        self.db = db
        self.country = default_country_code

    async def _ready(self) -> None:
        await self.db.ensure_schema("users", MIGRATIONS)

    def _clean(self, user: UserRecord) -> UserRecord:
        phone = normalize_phone(user.phone, self.country) if user.phone else None
        email = normalize_email(user.email) if user.email else None
        return user.model_copy(update={"phone": phone, "email": email})

    def _upsert(self, conn: sqlite3.Connection, user: UserRecord, *, keep_existing: bool) -> None:
        now = _now()
        if keep_existing:  # first authenticated use: fill gaps, never overwrite what an operator imported
            conn.execute(
                "INSERT INTO users(id, username, display_name, phone, email, role, created_at, updated_at) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "username = COALESCE(users.username, excluded.username), "
                "display_name = COALESCE(users.display_name, excluded.display_name), "
                "phone = COALESCE(users.phone, excluded.phone), email = COALESCE(users.email, excluded.email), "
                "role = excluded.role, updated_at = excluded.updated_at",
                (user.id, user.username, user.display_name, user.phone, user.email, user.role, now, now),
            )
            return
        conn.execute(
            "INSERT INTO users(id, username, display_name, phone, email, role, created_at, updated_at) "
            "VALUES(?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET username = excluded.username, "
            "display_name = excluded.display_name, phone = excluded.phone, email = excluded.email, "
            "role = excluded.role, updated_at = excluded.updated_at",
            (user.id, user.username, user.display_name, user.phone, user.email, user.role, now, now),
        )
        conn.execute("DELETE FROM user_groups WHERE user_id = ?", (user.id,))
        conn.executemany(
            "INSERT INTO user_groups(user_id, group_name) VALUES(?, ?)", [(user.id, g) for g in user.groups]
        )

    def _importer(self, users: Iterable[UserRecord]) -> Callable[[sqlite3.Connection], int]:
        cleaned = [self._clean(user) for user in users]

        def apply(conn: sqlite3.Connection) -> int:
            for user in cleaned:
                self._upsert(conn, user, keep_existing=False)
            return len(cleaned)

        return apply

    async def import_users(self, users: Iterable[UserRecord]) -> int:
        """Insert or replace users (all of them, or none if one conflicts)."""
        await self._ready()
        return await self.db.write(self._importer(users))

    def import_users_sync(self, users: Iterable[UserRecord]) -> int:
        """The same, for the command line (no event loop)."""
        self.db.ensure_schema_sync("users", MIGRATIONS)
        return self.db.write_sync(self._importer(users))

    async def ensure_from_claims(self, claims: Mapping[str, Any], role: Role) -> None:
        """Enter a token's user on first authenticated use (`sub`, `preferred_username`, `name`, ...)."""
        await self._ready()
        user = self._clean(
            UserRecord(
                id=str(claims["sub"]),
                username=_text(claims.get("preferred_username")),
                display_name=_text(claims.get("name")),
                phone=_text(claims.get("phone_number")),
                email=_text(claims.get("email")),
                role=role,
            )
        )

        def apply(conn: sqlite3.Connection) -> None:
            try:
                self._upsert(conn, user, keep_existing=True)
            except sqlite3.IntegrityError:  # the username belongs to someone else: keep the id only
                self._upsert(conn, user.model_copy(update={"username": None}), keep_existing=True)

        await self.db.write(apply)

    async def is_empty(self) -> bool:
        await self._ready()
        return await self.db.read(lambda conn: conn.execute("SELECT 1 FROM users LIMIT 1").fetchone() is None)

    async def get(self, user_id: str) -> UserRecord | None:
        await self._ready()
        return await self.db.read(lambda conn: _load(conn, "id = ?", (user_id,)).get(user_id))

    async def get_many(self, user_ids: Iterable[str]) -> dict[str, UserRecord]:
        await self._ready()
        ids = list(dict.fromkeys(user_ids))
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return await self.db.read(lambda conn: _load(conn, f"id IN ({marks})", ids))

    async def find_by_contact(self, contact: str) -> list[UserRecord]:
        await self._ready()
        email = normalize_email(contact)
        phone = None if email else normalize_phone(contact, self.country)
        if email is None and phone is None:
            return []
        where, args = ("email = ?", (email,)) if email else ("phone = ?", (phone,))
        return list((await self.db.read(lambda conn: _load(conn, where, args))).values())

    async def find_by_username(self, text: str, limit: int) -> list[UserRecord]:
        await self._ready()
        needle = text.strip().lstrip("@")
        escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where = (
            "username LIKE ? ESCAPE '\\' OR display_name LIKE ? ESCAPE '\\' "
            f"ORDER BY (username = ? COLLATE NOCASE) DESC, username LIMIT {int(limit)}"
        )
        args = (f"%{escaped}%", f"%{escaped}%", needle)
        return list((await self.db.read(lambda conn: _load(conn, where, args))).values())

    async def group_members(self, group: str) -> list[UserRecord]:
        await self._ready()
        where = "id IN (SELECT user_id FROM user_groups WHERE group_name = ?) ORDER BY username"
        return list((await self.db.read(lambda conn: _load(conn, where, (group.strip(),)))).values())

    async def resolve(self, identifier: str) -> list[UserRecord]:
        """Users an identifier may name: an id, a username (with or without @), an email or a phone."""
        await self._ready()
        text = identifier.strip()
        if not text:
            return []
        by_id = await self.get(text)
        if by_id is not None:
            return [by_id]
        if "@" in text[1:]:
            return await self.find_by_contact(text)
        username = text.lstrip("@")
        found = await self.db.read(lambda conn: _load(conn, "username = ?", (username,)))
        if found:
            return list(found.values())
        if normalize_phone(text, self.country):
            return await self.find_by_contact(text)
        return []


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _load(conn: sqlite3.Connection, where: str, args: Iterable[Any]) -> dict[str, UserRecord]:
    rows = conn.execute(f"SELECT * FROM users WHERE {where}", tuple(args)).fetchall()
    if not rows:
        return {}
    ids = [row["id"] for row in rows]
    marks = ",".join("?" * len(ids))
    groups: dict[str, list[str]] = {}
    for row in conn.execute(f"SELECT user_id, group_name FROM user_groups WHERE user_id IN ({marks})", ids):
        groups.setdefault(row["user_id"], []).append(row["group_name"])
    return {
        row["id"]: UserRecord(
            id=row["id"],
            username=row["username"],
            display_name=row["display_name"],
            phone=row["phone"],
            email=row["email"],
            role=row["role"],
            groups=groups.get(row["id"], []),
        )
        for row in rows
    }
