"""PostgreSQL access for the shared store: an async connection pool, one transaction per operation.

`transaction()` lends a pooled connection inside one transaction: committed when the block ends,
rolled back if it raises. A database that cannot be reached (down, restarting, a connection cut)
raises `StoreUnavailable` (retryable), never a driver error; the pool checks a connection before
lending it, so after a restart the next call works again without restarting the server.

Each component owns its schema as an ordered list of migrations (SQL scripts or async callables),
applied once per process under an advisory lock held for the migration's transaction, so replicas
starting together migrate once; a database whose schema is newer than this program is refused.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from toolsets.infra.store.errors import SchemaTooNew, StoreUnavailable

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

logger = logging.getLogger("truloop.store")

# a pooled connection, rows as dicts (quoted: psycopg is imported when the pool is first opened)
Conn: TypeAlias = "AsyncConnection[dict[str, Any]]"
PgMigration = str | Callable[[Conn], Awaitable[None]]

# pg_advisory_xact_lock keys (any 64-bit numbers, fixed): one for migrations, one for knowledge-index writers.
MIGRATION_LOCK = 0x7472_756C_6F6F_7001
KNOWLEDGE_LOCK = 0x7472_756C_6F6F_7002

SCHEMA_VERSIONS = "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"


class PgDatabase:
    """The shared store's connections. `url` is a libpq URL (`postgresql://user:pass@host:5432/db`)."""

    kind = "postgresql"

    def __init__(self, url: str, *, max_size: int = 10, acquire_timeout: float = 5.0) -> None:
        self.url = url
        self.max_size = max_size
        self.acquire_timeout = acquire_timeout
        self._pool: AsyncConnectionPool | None = None
        self._opening = anyio.Lock()
        self._ready: set[str] = set()

    def __repr__(self) -> str:  # the URL may carry a password
        return "PgDatabase(<url hidden>)"

    async def pool(self) -> AsyncConnectionPool:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    from psycopg.rows import dict_row
                    from psycopg_pool import AsyncConnectionPool

                    pool = AsyncConnectionPool(
                        self.url,
                        min_size=1,
                        max_size=self.max_size,
                        timeout=self.acquire_timeout,
                        kwargs={"row_factory": dict_row, "connect_timeout": 3},
                        check=AsyncConnectionPool.check_connection,
                        open=False,
                    )
                    await pool.open(wait=False)
                    self._pool = pool
        return self._pool

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """A pooled connection inside one transaction; `StoreUnavailable` when the server cannot be reached."""
        import psycopg

        pool = await self.pool()
        try:
            async with pool.connection() as conn:
                yield conn  # type: ignore[misc]  # the pool is made with dict_row, which psycopg_pool cannot type
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            if isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable):
                raise
            logger.warning("PostgreSQL unavailable: %s", type(exc).__name__)
            raise StoreUnavailable(
                "the shared database (PostgreSQL) cannot be reached right now; nothing was changed, try again"
            ) from exc

    async def ping(self) -> None:
        async with self.transaction() as conn:
            await conn.execute("SELECT 1")

    async def ensure_schema(self, component: str, migrations: Sequence[PgMigration]) -> None:
        if component in self._ready:
            return
        async with self.transaction() as conn:
            await migrate(conn, component, migrations)
        self._ready.add(component)

    async def versions(self) -> dict[str, int]:
        """Each component's schema version in this database ({} before the first migration)."""
        async with self.transaction() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await conn.execute(SCHEMA_VERSIONS)
            rows = await (await conn.execute("SELECT component, version FROM schema_versions")).fetchall()
        return {row["component"]: row["version"] for row in rows}

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()


async def migrate(conn: Conn, component: str, migrations: Sequence[PgMigration]) -> None:
    """Bring `component` up to date inside the caller's transaction, holding the migration lock."""
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    await conn.execute(SCHEMA_VERSIONS)
    row = await (
        await conn.execute("SELECT version FROM schema_versions WHERE component = %s", (component,))
    ).fetchone()
    current = row["version"] if row else 0
    if current > len(migrations):
        raise SchemaTooNew(
            f"the database's {component} schema is version {current}, newer than this program knows "
            f"({len(migrations)}); upgrade truloop-mcp"
        )
    for version, migration in enumerate(migrations[current:], start=current + 1):
        logger.info("migrating %s schema to version %d (PostgreSQL)", component, version)
        if callable(migration):
            await migration(conn)
        else:
            await conn.execute(migration)  # a script of several statements, no parameters
        await conn.execute(
            "INSERT INTO schema_versions(component, version) VALUES(%s, %s) "
            "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
            (component, version),
        )
