"""What a store holds, backend by backend: its components' migrations, their tables, and row counts.

`truloop-mcp db migrate|status|copy` and the tests read a store through these, whichever backend it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsets.infra.store.db import Database

if TYPE_CHECKING:
    from toolsets.infra.store.postgres.database import PgDatabase

    Store = Database | PgDatabase

# component -> its tables, parents first (the order rows are copied in)
TABLES: dict[str, tuple[str, ...]] = {
    "users": ("users", "user_groups"),
    "events": ("events", "invitations"),
    "inbox": ("inbox",),
    "memory": ("memories",),
    "knowledge": ("knowledge_files", "knowledge_chunks"),
}


def migrations(store: Store) -> dict[str, list[Any]]:
    """Each component's migrations for this backend."""
    if isinstance(store, Database):
        from toolsets.infra.store import events, inbox, memories, users
        from toolsets.infra.store.knowledge import schema

        return {
            "users": list(users.MIGRATIONS),
            "events": list(events.MIGRATIONS),
            "inbox": list(inbox.MIGRATIONS),
            "memory": list(memories.MIGRATIONS),
            "knowledge": list(schema.MIGRATIONS),
        }
    from toolsets.infra.store.postgres import events as pg_events
    from toolsets.infra.store.postgres import inbox as pg_inbox
    from toolsets.infra.store.postgres import knowledge as pg_knowledge
    from toolsets.infra.store.postgres import memories as pg_memories
    from toolsets.infra.store.postgres import users as pg_users

    return {
        "users": pg_users.MIGRATIONS,
        "events": pg_events.MIGRATIONS,
        "inbox": pg_inbox.MIGRATIONS,
        "memory": pg_memories.MIGRATIONS,
        "knowledge": pg_knowledge.MIGRATIONS,
    }


async def migrate_all(store: Store) -> dict[str, int]:
    """Bring every component up to date; each one's version after."""
    for component, steps in migrations(store).items():
        await store.ensure_schema(component, steps)
    return await versions(store)


async def versions(store: Store) -> dict[str, int]:
    """Each component's schema version in the store (0: not created yet)."""
    if isinstance(store, Database):
        found = await store.read(
            lambda conn: {row[0]: row[1] for row in conn.execute("SELECT component, version FROM schema_versions")}
        )
    else:
        found = await store.versions()
    return {component: int(found.get(component, 0)) for component in TABLES}


async def count_rows(store: Store, table: str) -> int:
    """Rows in one of the store's tables (`TABLES`; 0 when the table does not exist yet)."""
    if not any(table in names for names in TABLES.values()):
        raise ValueError(f"unknown table {table!r}")
    if isinstance(store, Database):

        def count(conn: Any) -> int:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) if exists else 0

        return await store.read(count)
    async with store.transaction() as conn:
        row = await (await conn.execute("SELECT to_regclass(%s) IS NOT NULL AS present", (table,))).fetchone()
        if not row or not row["present"]:
            return 0
        counted = await (await conn.execute(f"SELECT count(*) AS n FROM {table}")).fetchone()
    return int(counted["n"]) if counted else 0
