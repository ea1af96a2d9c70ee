"""The user directory in the embedded SQLite store (`UserStore`).

Group names are compared in one canonical form (`canonical_key`: NFKC + casefold), stored beside
the name as given, so the permission check and the lookup can never disagree. Names are searchable
through the shared analyzer (`toolsets.infra.text`) plus Latin spellings of Korean names, in an FTS5
table.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from toolsets.core.roles import Role
from toolsets.infra.clock import now_iso
from toolsets.infra.contacts import DEFAULT_COUNTRY_CODE, parse_contact_or_none
from toolsets.infra.store.sqlite.database import Database, Migration
from toolsets.infra.store.users.contract import UserRecord
from toolsets.infra.store.users.shared import (
    cleaned,
    contains_pattern,
    from_claims,
    name_terms,
    replaced_columns,
    replaces_groups,
    resolve_identifier,
    search_needle,
    user_record,
    username_conflict,
)
from toolsets.infra.text import analyzer, canonical_key, match_expression

MIGRATIONS: list[Migration] = [
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
    """,
]


def _migrate_canonical_groups_and_name_index(conn: sqlite3.Connection) -> None:
    """2: group names keyed by their canonical form (existing rows converted; two spellings of one
    name for the same user become one row), and a name index built from the app's analyzer terms."""
    conn.execute(
        "CREATE TABLE user_groups_v2 (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, "
        "group_name TEXT NOT NULL, group_key TEXT NOT NULL, PRIMARY KEY (user_id, group_key))"
    )
    rows = conn.execute("SELECT user_id, group_name FROM user_groups ORDER BY user_id, group_name").fetchall()
    conn.executemany(
        "INSERT OR IGNORE INTO user_groups_v2(user_id, group_name, group_key) VALUES(?, ?, ?)",
        [(user_id, name, canonical_key(name)) for user_id, name in rows if canonical_key(name)],
    )
    conn.execute("DROP TABLE user_groups")
    conn.execute("ALTER TABLE user_groups_v2 RENAME TO user_groups")
    conn.execute("CREATE INDEX user_groups_by_key ON user_groups(group_key)")
    for statement in (
        "CREATE TABLE user_terms (seq INTEGER PRIMARY KEY, "
        "user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE, "
        "terms TEXT NOT NULL, analyzer TEXT NOT NULL)",
        "CREATE VIRTUAL TABLE users_fts USING fts5(terms, content='user_terms', content_rowid='seq', tokenize='ascii')",
        "CREATE TRIGGER user_terms_insert AFTER INSERT ON user_terms BEGIN "
        "INSERT INTO users_fts(rowid, terms) VALUES (new.seq, new.terms); END",
        "CREATE TRIGGER user_terms_delete AFTER DELETE ON user_terms BEGIN "
        "INSERT INTO users_fts(users_fts, rowid, terms) VALUES ('delete', old.seq, old.terms); END",
        "CREATE TRIGGER user_terms_update AFTER UPDATE ON user_terms BEGIN "
        "INSERT INTO users_fts(users_fts, rowid, terms) VALUES ('delete', old.seq, old.terms); "
        "INSERT INTO users_fts(rowid, terms) VALUES (new.seq, new.terms); END",
    ):
        conn.execute(statement)


MIGRATIONS.append(_migrate_canonical_groups_and_name_index)
MIGRATIONS.append(  # 3: each user's zone and language (none: their token's, else the server's)
    """
    ALTER TABLE users ADD COLUMN timezone TEXT;
    ALTER TABLE users ADD COLUMN locale TEXT;
    """
)

_COLUMNS = "id, username, display_name, phone, email, role, timezone, locale, created_at, updated_at"
_VALUES = "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _index_names(conn: sqlite3.Connection, user_ids: Iterable[str]) -> None:
    version = analyzer().id
    for user_id in user_ids:
        row = conn.execute("SELECT username, display_name FROM users WHERE id = ?", (user_id,)).fetchone()
        if row is None:
            continue
        conn.execute(
            "INSERT INTO user_terms(user_id, terms, analyzer) VALUES(?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET "
            "terms = excluded.terms, analyzer = excluded.analyzer",
            (user_id, name_terms(row["username"], row["display_name"]), version),
        )


class SqliteUserStore:
    """The user directory in the embedded store."""

    country: str = DEFAULT_COUNTRY_CODE  # the contract's; each store is given its own

    def __init__(self, db: Database, *, default_country_code: str = DEFAULT_COUNTRY_CODE) -> None:
        self.db = db
        self.country = default_country_code
        self._names_current = False

    async def _ready(self) -> None:
        await self.db.ensure_schema("users", MIGRATIONS)
        if not self._names_current:  # users entered before the name index, or under another analyzer
            await self.db.write(_reindex_names)
            self._names_current = True

    def _upsert(self, conn: sqlite3.Connection, user: UserRecord, *, keep_existing: bool) -> None:
        now = now_iso()
        values = (
            user.id, user.username, user.display_name, user.phone, user.email, user.role, user.timezone, user.locale,
            now, now,
        )  # fmt: skip
        if keep_existing:  # first authenticated use: fill gaps, never overwrite what an operator imported
            conn.execute(
                f"INSERT INTO users({_COLUMNS}) {_VALUES} ON CONFLICT(id) DO UPDATE SET "
                "username = COALESCE(users.username, excluded.username), "
                "display_name = COALESCE(users.display_name, excluded.display_name), "
                "phone = COALESCE(users.phone, excluded.phone), email = COALESCE(users.email, excluded.email), "
                "role = excluded.role, updated_at = excluded.updated_at",
                values,
            )
            return
        conn.execute(
            f"INSERT INTO users({_COLUMNS}) {_VALUES} ON CONFLICT(id) DO UPDATE SET {replaced_columns(user)}"
            "updated_at = excluded.updated_at",
            values,
        )
        if not replaces_groups(user):
            return
        conn.execute("DELETE FROM user_groups WHERE user_id = ?", (user.id,))
        conn.executemany(
            "INSERT INTO user_groups(user_id, group_name, group_key) VALUES(?, ?, ?)",
            [(user.id, g, canonical_key(g)) for g in user.groups],
        )

    def _importer(self, users: Iterable[UserRecord]) -> Callable[[sqlite3.Connection], int]:
        cleaned_users = [cleaned(user, self.country) for user in users]

        def apply(conn: sqlite3.Connection) -> int:
            for user in cleaned_users:
                self._upsert(conn, user, keep_existing=False)
            _index_names(conn, [user.id for user in cleaned_users])
            return len(cleaned_users)

        return apply

    async def import_users(self, users: Iterable[UserRecord]) -> int:
        """Insert or replace users (all of them, or none if one conflicts: `Conflict`)."""
        await self._ready()
        with _conflict_on_integrity_error():
            return await self.db.write(self._importer(users))

    def import_users_sync(self, users: Iterable[UserRecord]) -> int:
        """The same, for the command line (no event loop)."""
        self.db.ensure_schema_sync("users", MIGRATIONS)
        self.db.write_sync(_reindex_names)
        with _conflict_on_integrity_error():
            return self.db.write_sync(self._importer(users))

    async def ensure_from_claims(self, claims: Mapping[str, Any], role: Role) -> None:
        """Enter a token's user on first authenticated use (`sub`, `preferred_username`, `name`, ...)."""
        await self._ready()
        user = from_claims(claims, role, self.country)

        def apply(conn: sqlite3.Connection) -> None:
            try:
                self._upsert(conn, user, keep_existing=True)
            except sqlite3.IntegrityError:  # the username belongs to someone else: keep the id only
                self._upsert(conn, user.model_copy(update={"username": None}), keep_existing=True)
            _index_names(conn, [user.id])

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
        found = parse_contact_or_none(contact, self.country)
        if found is None:
            return []
        where = "email = ?" if found.kind == "email" else "phone = ?"
        return list((await self.db.read(lambda conn: _load(conn, where, (found.value,)))).values())

    async def find_by_username(self, text: str, limit: int) -> list[UserRecord]:
        """Users whose username or name contains `text`, or whose name has every word of it (`민지` and
        `Minji Kim` both find `김민지`): the exact username first, then by relevance."""
        await self._ready()
        needle = search_needle(text)
        if needle is None:
            return []
        pattern = contains_pattern(needle)
        match = match_expression(analyzer().query_terms(needle), require="all")

        def run(conn: sqlite3.Connection) -> list[UserRecord]:
            ids: dict[str, None] = {}
            exact = conn.execute("SELECT id FROM users WHERE username = ? COLLATE NOCASE", (needle,)).fetchone()
            if exact is not None:
                ids[exact[0]] = None
            if match:
                for row in conn.execute(
                    "SELECT t.user_id FROM users_fts JOIN user_terms t ON t.seq = users_fts.rowid "
                    "WHERE users_fts MATCH ? ORDER BY rank LIMIT ?",
                    (match, limit),
                ):
                    ids.setdefault(row[0], None)
            for row in conn.execute(
                "SELECT id FROM users WHERE username LIKE ? ESCAPE '\\' OR display_name LIKE ? ESCAPE '\\' "
                "ORDER BY username LIMIT ?",
                (pattern, pattern, limit),
            ):
                ids.setdefault(row[0], None)
            chosen = list(ids)[:limit]
            found = _load(conn, f"id IN ({','.join('?' * len(chosen))})", chosen) if chosen else {}
            return [found[user_id] for user_id in chosen if user_id in found]

        return await self.db.read(run)

    async def group_members(self, group: str) -> list[UserRecord]:
        """Members of the group whose canonical name is `group`'s."""
        await self._ready()
        key = canonical_key(group)
        if not key:
            return []
        where = "id IN (SELECT user_id FROM user_groups WHERE group_key = ?) ORDER BY username"
        return list((await self.db.read(lambda conn: _load(conn, where, (key,)))).values())

    async def resolve(self, identifier: str) -> list[UserRecord]:
        """Users an identifier may name: an id, a username (with or without @), an email or a phone."""
        await self._ready()
        return await resolve_identifier(self, identifier)

    async def by_username(self, username: str) -> list[UserRecord]:
        """The user with this username, compared without case."""
        await self._ready()
        return list((await self.db.read(lambda conn: _load(conn, "username = ?", (username,)))).values())


def _reindex_names(conn: sqlite3.Connection) -> int:
    """Index the names of users not yet indexed with the current analyzer; how many were."""
    stale = [
        row[0]
        for row in conn.execute(
            "SELECT u.id FROM users u LEFT JOIN user_terms t ON t.user_id = u.id "
            "WHERE t.user_id IS NULL OR t.analyzer != ?",
            (analyzer().id,),
        )
    ]
    _index_names(conn, stale)
    return len(stale)


@contextlib.contextmanager
def _conflict_on_integrity_error() -> Iterator[None]:
    """A write refused by a uniqueness rule raises `Conflict` (nothing was written)."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise username_conflict(exc) from None


def _load(conn: sqlite3.Connection, where: str, args: Iterable[Any]) -> dict[str, UserRecord]:
    rows = conn.execute(f"SELECT * FROM users WHERE {where}", tuple(args)).fetchall()
    if not rows:
        return {}
    ids = [row["id"] for row in rows]
    marks = ",".join("?" * len(ids))
    groups: dict[str, list[str]] = {}
    for row in conn.execute(f"SELECT user_id, group_name FROM user_groups WHERE user_id IN ({marks})", ids):
        groups.setdefault(row["user_id"], []).append(row["group_name"])
    return {row["id"]: user_record(row, groups.get(row["id"], [])) for row in rows}
