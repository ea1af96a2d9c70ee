"""`truloop-mcp db copy`: an embedded SQLite store moved onto the shared PostgreSQL store, checked.

Every table's rows are copied in one PostgreSQL transaction (all or nothing), into a target that must
hold no data yet; search terms are computed again by the current analyzer (the indexes are derived
data). Each table is then read back from both sides and compared by row count and a SHA-256 over its
rows (the columns both backends keep, in key order), so "copied" means "equal".
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from toolsets.infra.store.errors import StoreError
from toolsets.infra.store.inventory import TABLES
from toolsets.infra.store.postgres.backend import PostgresBackend
from toolsets.infra.store.postgres.database import PgDatabase
from toolsets.infra.store.sqlite.backend import SqliteBackend
from toolsets.infra.store.sqlite.database import Database

EVENT_COLUMNS = ("id", "owner_id", "title", "start", "end", "start_utc", "end_utc", "timezone", "location",
                 "description", "availability_deadline", "created_at", "updated_at")  # fmt: skip
# table -> (the columns compared and copied, how many of them form the key)
COLUMNS: dict[str, tuple[tuple[str, ...], int]] = {
    "users": (
        ("id", "username", "display_name", "phone", "email", "role", "timezone", "locale", "created_at", "updated_at"),
        1,
    ),
    "user_groups": (("user_id", "group_key", "group_name"), 2),
    "events": (EVENT_COLUMNS, 1),
    "invitations": (("event_id", "user_id", "invited_by", "invited_at", "available_dates", "responded_at"), 2),
    "inbox": (
        ("id", "recipient_id", "sender_id", "text", "original", "composed_by", "created_at", "delivered_at", "read_at"),
        1,
    ),
    "memories": (("id", "user_id", "content", "tags", "created_at"), 1),
    "knowledge_files": (("path", "mtime_ns", "size", "digest", "title", "page_id", "chunks"), 1),
    "knowledge_chunks": (("path", "ordinal", "heading", "body"), 2),
}


class CopyRefused(StoreError):  # noqa: N818 - a state of the target or source
    """The copy would lose or mix data (the target already holds some, the source does not exist)."""


@dataclass(frozen=True, slots=True)
class TableCopy:
    table: str
    source_rows: int
    target_rows: int
    source_checksum: str
    target_checksum: str

    @property
    def equal(self) -> bool:
        return self.source_rows == self.target_rows and self.source_checksum == self.target_checksum


def checksum(rows: Sequence[Sequence[Any]]) -> str:
    return hashlib.sha256(json.dumps(list(map(list, rows)), ensure_ascii=False).encode()).hexdigest()


def _sorted(rows: list[tuple[Any, ...]], key_columns: int) -> list[tuple[Any, ...]]:
    return sorted(rows, key=lambda row: tuple("" if value is None else str(value) for value in row[:key_columns]))


def _quoted(columns: Sequence[str]) -> str:
    return ", ".join(f'"{column}"' for column in columns)


def read_sqlite(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    def read(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
        found = {}
        for table, (columns, key) in COLUMNS.items():
            rows = [tuple(row) for row in conn.execute(f"SELECT {_quoted(columns)} FROM {table}")]
            found[table] = _sorted(rows, key)
        return found

    return db.read_sync(read)


async def read_postgres(pg: PgDatabase) -> dict[str, list[tuple[Any, ...]]]:
    found = {}
    async with pg.transaction() as conn:
        for table, (columns, key) in COLUMNS.items():
            rows = await (await conn.execute(f"SELECT {_quoted(columns)} FROM {table}")).fetchall()
            found[table] = _sorted([tuple(row[column] for column in columns) for row in rows], key)
    return found


def snapshot_readonly(source: Path, into: Path) -> None:
    """A consistent copy of the SQLite store at `source`, read through a read-only connection. A store with no
    write-ahead log (closed cleanly) is opened `immutable`, so not even the log's index files are created beside
    it; one in use is opened `mode=ro` and read as of now."""
    in_use = source.with_name(source.name + "-wal").exists()
    reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro{'' if in_use else '&immutable=1'}", uri=True)
    try:
        writer = sqlite3.connect(into)
        try:
            reader.backup(writer)
        finally:
            writer.close()
    except sqlite3.Error as exc:
        raise CopyRefused(f"{source} could not be read as an embedded store ({exc})") from None
    finally:
        reader.close()


async def copy_sqlite_to_postgres(
    source_path: Path, target: PostgresBackend, report: Callable[[str], None] = lambda line: None
) -> list[TableCopy]:
    """Copy the store at `source_path` into `target` (whose tables must be empty); the per-table comparison."""
    from toolsets.infra.store.knowledge.postgres import chunk_tsv
    from toolsets.infra.store.knowledge.prepare import chunk_terms
    from toolsets.infra.store.memories.postgres import memory_tsv
    from toolsets.infra.store.memories.shared import memory_terms
    from toolsets.infra.store.users.postgres import index_names
    from toolsets.infra.text import analyzer

    if not await anyio.Path(source_path).is_file():
        raise CopyRefused(f"{source_path} is not an embedded store (no such file)")
    with tempfile.TemporaryDirectory(prefix="truloop-copy-") as scratch:  # 0700, removed after
        # The source is only ever read: a snapshot of it is taken through a read-only connection, and an older
        # schema is brought up to date in the snapshot, never in the source.
        snapshot = Path(scratch) / "source.sqlite3"
        await anyio.to_thread.run_sync(snapshot_readonly, source_path, snapshot)
        source = SqliteBackend.file(snapshot)
        try:
            versions = await source.migrate()
            report(f"source {source_path}: schema {versions}")
            rows = read_sqlite(source.db)
        finally:
            source.close()
    await target.migrate()
    held = {table: await target.count_rows(table) for names in TABLES.values() for table in names}
    if any(held.values()):
        busy = ", ".join(f"{table} ({count})" for table, count in held.items() if count)
        raise CopyRefused(f"the target database already holds data ({busy}); copy into an empty database")

    text = analyzer()
    titles = {row[0]: row[4] for row in rows["knowledge_files"]}
    async with target.pg.transaction() as conn, conn.cursor() as cursor:
        for table, (columns, _) in COLUMNS.items():
            if not rows[table]:
                continue
            extra: tuple[str, ...] = ()
            values: list[tuple[Any, ...]] = rows[table]
            if table == "memories":
                extra = ("content_terms", "tags_terms", "analyzer", "tsv")
                values = []
                for row in rows[table]:
                    content_terms, tags_terms = memory_terms(text, row[2], json.loads(row[3]))
                    values.append(
                        (*row, content_terms, tags_terms, text.id, memory_tsv(row[1], content_terms, tags_terms))
                    )
            elif table == "knowledge_chunks":
                extra = ("analyzer", "tsv")
                values = [
                    (*row, text.id, chunk_tsv(*chunk_terms(text, titles.get(row[0], ""), row[2], row[3])))
                    for row in rows[table]
                ]
            names = (*columns, *extra)
            marks = ", ".join("%s::tsvector" if name == "tsv" else "%s" for name in names)
            await cursor.executemany(f"INSERT INTO {table}({_quoted(names)}) VALUES({marks})", values)
            report(f"copied {len(values)} {table}")
        await index_names(conn, [row[0] for row in rows["users"]])
        await conn.execute(
            "INSERT INTO knowledge_meta(key, value) VALUES('analyzer', %s) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (text.id,),
        )

    copied = await read_postgres(target.pg)
    return [
        TableCopy(table, len(rows[table]), len(copied[table]), checksum(rows[table]), checksum(copied[table]))
        for table in COLUMNS
    ]
