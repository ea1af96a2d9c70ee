"""What every store holds, whichever its backend: its components and their tables.

`truloop-mcp db migrate|status|copy` and the tests read a store through its backend
(`toolsets.infra.store.backend.StoreBackend`), which answers in these terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol

# component -> its tables, parents first (the order rows are copied in)
TABLES: dict[str, tuple[str, ...]] = {
    "users": ("users", "user_groups"),
    "events": ("events", "invitations"),
    "inbox": ("inbox",),
    "memory": ("memories",),
    "knowledge": ("knowledge_files", "knowledge_chunks"),
}


class SchemaOwner(Protocol):
    """A database that applies a component's migrations (`Database`, `PgDatabase`)."""

    async def ensure_schema(self, component: str, migrations: Sequence[Any]) -> None: ...


def by_component(
    users: ModuleType, events: ModuleType, inbox: ModuleType, memories: ModuleType, knowledge: ModuleType
) -> dict[str, list[Any]]:
    """Each component's migrations, from one backend's implementation modules (each has `MIGRATIONS`)."""
    modules = {"users": users, "events": events, "inbox": inbox, "memory": memories, "knowledge": knowledge}
    return {component: list(modules[component].MIGRATIONS) for component in TABLES}


async def migrate_all(database: SchemaOwner, migrations: Mapping[str, Sequence[Any]]) -> None:
    """Bring every component of `database` up to date, in `TABLES`' order."""
    for component, steps in migrations.items():
        await database.ensure_schema(component, steps)


def component_versions(found: Mapping[str, int]) -> dict[str, int]:
    """Each component's schema version from a store's `schema_versions` rows (0: not created yet)."""
    return {component: int(found.get(component, 0)) for component in TABLES}


def known_table(table: str) -> str:
    """`table`, when it is one of the store's tables (`TABLES`); ValueError otherwise (it goes into SQL)."""
    if not any(table in names for names in TABLES.values()):
        raise ValueError(f"unknown table {table!r}")
    return table
