"""The user directory in the shared PostgreSQL store (`UserStore`).

Usernames are unique without case (a unique index on `lower(username)`); names are found through the
analyzer's terms in a GIN-indexed `tsvector`, plus `ILIKE` for "contains".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from psycopg import errors as pg_errors

from toolsets.core.roles import Role
from toolsets.infra.clock import now_iso
from toolsets.infra.contacts import DEFAULT_COUNTRY_CODE, parse_contact_or_none
from toolsets.infra.store.postgres.database import Conn, PgDatabase, PgMigration
from toolsets.infra.store.postgres.search import all_of, query_terms, tsvector_literal
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
from toolsets.infra.text import analyzer, canonical_key

MIGRATIONS: list[PgMigration] = [
    """
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        username TEXT,
        display_name TEXT,
        phone TEXT,
        email TEXT,
        role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'guest')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX users_username ON users (lower(username));
    CREATE INDEX users_phone ON users (phone);
    CREATE INDEX users_email ON users (email);
    CREATE TABLE user_groups (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        group_name TEXT NOT NULL,
        group_key TEXT NOT NULL,
        PRIMARY KEY (user_id, group_key)
    );
    CREATE INDEX user_groups_by_key ON user_groups (group_key);
    CREATE TABLE user_terms (
        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        terms TEXT NOT NULL,
        analyzer TEXT NOT NULL,
        tsv TSVECTOR NOT NULL
    );
    CREATE INDEX user_terms_tsv ON user_terms USING GIN (tsv);
    """,
    # 2: each user's zone and language (none: their token's, else the server's)
    """
    ALTER TABLE users ADD COLUMN timezone TEXT;
    ALTER TABLE users ADD COLUMN locale TEXT;
    """,
]

_UPSERT = (
    "INSERT INTO users(id, username, display_name, phone, email, role, timezone, locale, created_at, updated_at) "
    "VALUES(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT(id) DO UPDATE SET "
)
_FILL_GAPS = _UPSERT + (
    "username = COALESCE(users.username, excluded.username), "
    "display_name = COALESCE(users.display_name, excluded.display_name), "
    "phone = COALESCE(users.phone, excluded.phone), email = COALESCE(users.email, excluded.email), "
    "role = excluded.role, updated_at = excluded.updated_at"
)


async def index_names(conn: Conn, user_ids: Iterable[str]) -> None:
    version = analyzer().id
    for user_id in user_ids:
        row = await (
            await conn.execute("SELECT username, display_name FROM users WHERE id = %s", (user_id,))
        ).fetchone()
        if row is None:
            continue
        terms = name_terms(row["username"], row["display_name"])
        await conn.execute(
            "INSERT INTO user_terms(user_id, terms, analyzer, tsv) VALUES(%s, %s, %s, %s::tsvector) "
            "ON CONFLICT(user_id) DO UPDATE SET "
            "terms = excluded.terms, analyzer = excluded.analyzer, tsv = excluded.tsv",
            (user_id, terms, version, tsvector_literal([(terms, "D")])),
        )


async def _reindex_names(conn: Conn) -> None:
    rows = await (
        await conn.execute(
            "SELECT u.id FROM users u LEFT JOIN user_terms t ON t.user_id = u.id "
            "WHERE t.user_id IS NULL OR t.analyzer <> %s",
            (analyzer().id,),
        )
    ).fetchall()
    await index_names(conn, [row["id"] for row in rows])


async def write_user(conn: Conn, user: UserRecord, *, keep_existing: bool) -> None:
    now = now_iso()
    values = (
        user.id, user.username, user.display_name, user.phone, user.email, user.role, user.timezone, user.locale,
        now, now,
    )  # fmt: skip
    replace = _UPSERT + replaced_columns(user) + "updated_at = excluded.updated_at"
    await conn.execute(_FILL_GAPS if keep_existing else replace, values)
    if keep_existing or not replaces_groups(user):
        return
    await conn.execute("DELETE FROM user_groups WHERE user_id = %s", (user.id,))
    async with conn.cursor() as cursor:
        await cursor.executemany(
            "INSERT INTO user_groups(user_id, group_name, group_key) VALUES(%s, %s, %s)",
            [(user.id, group, canonical_key(group)) for group in user.groups],
        )


async def load(conn: Conn, where: str, args: Sequence[Any]) -> dict[str, UserRecord]:
    rows = await (await conn.execute(f"SELECT * FROM users WHERE {where}", tuple(args))).fetchall()
    if not rows:
        return {}
    ids = [row["id"] for row in rows]
    groups: dict[str, list[str]] = {}
    for row in await (
        await conn.execute(
            "SELECT user_id, group_name FROM user_groups WHERE user_id = ANY(%s) ORDER BY group_name", (ids,)
        )
    ).fetchall():
        groups.setdefault(row["user_id"], []).append(row["group_name"])
    return {row["id"]: user_record(row, groups.get(row["id"], [])) for row in rows}


class PgUserStore:
    """The user directory in the shared store."""

    country: str = DEFAULT_COUNTRY_CODE  # the contract's; each store is given its own

    def __init__(self, db: PgDatabase, *, default_country_code: str = DEFAULT_COUNTRY_CODE) -> None:
        self.pg = db
        self.country = default_country_code
        self._names_current = False

    async def _ready(self) -> None:
        await self.pg.ensure_schema("users", MIGRATIONS)
        if not self._names_current:
            async with self.pg.transaction() as conn:
                await _reindex_names(conn)
            self._names_current = True

    async def _read(self, where: str, args: Sequence[Any]) -> dict[str, UserRecord]:
        await self._ready()
        async with self.pg.transaction() as conn:
            return await load(conn, where, args)

    async def import_users(self, users: Iterable[UserRecord]) -> int:
        await self._ready()
        cleaned_users = [cleaned(user, self.country) for user in users]
        try:
            async with self.pg.transaction() as conn:
                for user in cleaned_users:
                    await write_user(conn, user, keep_existing=False)
                await index_names(conn, [user.id for user in cleaned_users])
        except pg_errors.UniqueViolation as exc:
            raise username_conflict(exc.diag.message_detail or exc) from None
        return len(cleaned_users)

    def import_users_sync(self, users: Iterable[UserRecord]) -> int:
        import anyio

        async def run() -> int:
            try:
                return await self.import_users(users)
            finally:
                await self.pg.close()

        return anyio.run(run)

    async def ensure_from_claims(self, claims: Mapping[str, Any], role: Role) -> None:
        await self._ready()
        user = from_claims(claims, role, self.country)
        async with self.pg.transaction() as conn:
            try:
                async with conn.transaction():  # a savepoint: a taken username must not abort the rest
                    await write_user(conn, user, keep_existing=True)
            except pg_errors.UniqueViolation:  # the username belongs to someone else: keep the id only
                await write_user(conn, user.model_copy(update={"username": None}), keep_existing=True)
            await index_names(conn, [user.id])

    async def is_empty(self) -> bool:
        await self._ready()
        async with self.pg.transaction() as conn:
            return await (await conn.execute("SELECT 1 FROM users LIMIT 1")).fetchone() is None

    async def get(self, user_id: str) -> UserRecord | None:
        return (await self._read("id = %s", (user_id,))).get(user_id)

    async def get_many(self, user_ids: Iterable[str]) -> dict[str, UserRecord]:
        ids = list(dict.fromkeys(user_ids))
        return await self._read("id = ANY(%s)", (ids,)) if ids else {}

    async def find_by_contact(self, contact: str) -> list[UserRecord]:
        found = parse_contact_or_none(contact, self.country)
        if found is None:
            return []
        where = "email = %s" if found.kind == "email" else "phone = %s"
        return list((await self._read(where, (found.value,))).values())

    async def by_username(self, username: str) -> list[UserRecord]:
        return list((await self._read("lower(username) = lower(%s)", (username,))).values())

    async def find_by_username(self, text: str, limit: int) -> list[UserRecord]:
        await self._ready()
        needle = search_needle(text)
        if needle is None:
            return []
        terms = query_terms(analyzer().query_terms(needle))
        async with self.pg.transaction() as conn:
            ids: dict[str, None] = {}
            exact = await (
                await conn.execute("SELECT id FROM users WHERE lower(username) = lower(%s)", (needle,))
            ).fetchone()
            if exact is not None:
                ids[exact["id"]] = None
            if terms:
                rows = await (
                    await conn.execute(
                        "SELECT user_id FROM user_terms WHERE tsv @@ %(q)s::tsquery "
                        "ORDER BY ts_rank(tsv, %(q)s::tsquery, 1) DESC, user_id LIMIT %(limit)s",
                        {"q": all_of(terms), "limit": limit},
                    )
                ).fetchall()
                for row in rows:
                    ids.setdefault(row["user_id"], None)
            rows = await (
                await conn.execute(
                    "SELECT id FROM users WHERE username ILIKE %(p)s OR display_name ILIKE %(p)s "
                    "ORDER BY username NULLS LAST, id LIMIT %(limit)s",
                    {"p": contains_pattern(needle), "limit": limit},
                )
            ).fetchall()
            for row in rows:
                ids.setdefault(row["id"], None)
            chosen = list(ids)[:limit]
            found = await load(conn, "id = ANY(%s)", (chosen,)) if chosen else {}
        return [found[user_id] for user_id in chosen if user_id in found]

    async def group_members(self, group: str) -> list[UserRecord]:
        key = canonical_key(group)
        if not key:
            return []
        where = "id IN (SELECT user_id FROM user_groups WHERE group_key = %s) ORDER BY username NULLS LAST, id"
        return list((await self._read(where, (key,))).values())

    async def resolve(self, identifier: str) -> list[UserRecord]:
        await self._ready()
        return await resolve_identifier(self, identifier)
