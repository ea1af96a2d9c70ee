"""SQLite access that never blocks the event loop.

One connection in WAL mode, used from worker threads one operation at a time (a lock
serialises them, so concurrent tool calls are safe). `write` runs its function inside
`BEGIN IMMEDIATE ... COMMIT`: an operation made of several statements lands whole or not
at all, even if the process dies between them. Each component owns its schema as an
ordered list of migrations, applied once, on first use (`ensure_schema`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from toolsets.infra.private_files import private_file
from toolsets.infra.store.errors import SchemaTooNew

logger = logging.getLogger("truloop.store")

T = TypeVar("T")
Migration = str | Callable[[sqlite3.Connection], None]


class Database:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if str(self.path) != ":memory:":
                private_file(self.path)  # 0600 before SQLite opens it: its -wal and -shm take the same mode
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER)")
            self._conn = conn
        return self._conn

    def _locked(self, fn: Callable[[sqlite3.Connection], T], transaction: bool) -> T:
        with self._lock:
            conn = self._connection()
            if not transaction:
                return fn(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._locked, fn, False)

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` in one transaction: all of its statements commit together, or none do."""
        return await anyio.to_thread.run_sync(self._locked, fn, True)

    def read_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """For command-line tools that run outside an event loop."""
        return self._locked(fn, False)

    def write_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """For command-line tools that run outside an event loop."""
        return self._locked(fn, True)

    async def ensure_schema(self, component: str, migrations: Sequence[Migration]) -> None:
        if component in self._ready:
            return
        await self.write(lambda conn: _migrate(conn, component, migrations))
        self._ready.add(component)

    def ensure_schema_sync(self, component: str, migrations: Sequence[Migration]) -> None:
        if component not in self._ready:
            self.write_sync(lambda conn: _migrate(conn, component, migrations))
            self._ready.add(component)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _migrate(conn: sqlite3.Connection, component: str, migrations: Sequence[Migration]) -> None:
    row = conn.execute("SELECT version FROM schema_versions WHERE component = ?", (component,)).fetchone()
    current = row[0] if row else 0
    if current > len(migrations):
        raise SchemaTooNew(
            f"the store's {component} schema is version {current}, newer than this program knows "
            f"({len(migrations)}); upgrade truloop-mcp"
        )
    for version, migration in enumerate(migrations[current:], start=current + 1):
        logger.info("migrating %s schema to version %d", component, version)
        if callable(migration):
            migration(conn)
        else:
            for statement in _statements(migration):
                conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_versions(component, version) VALUES(?, ?) "
            "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
            (component, version),
        )


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit our transaction)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
