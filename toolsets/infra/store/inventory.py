"""What every store holds, whichever its backend: its components and their tables.

`truloop-mcp db migrate|status|copy` and the tests read a store through its backend
(`toolsets.infra.store.backend.StoreBackend`), which answers in these terms.
"""

from __future__ import annotations

from collections.abc import Mapping

# component -> its tables, parents first (the order rows are copied in)
TABLES: dict[str, tuple[str, ...]] = {
    "users": ("users", "user_groups"),
    "events": ("events", "invitations"),
    "inbox": ("inbox",),
    "memory": ("memories",),
    "knowledge": ("knowledge_files", "knowledge_chunks"),
}


def component_versions(found: Mapping[str, int]) -> dict[str, int]:
    """Each component's schema version from a store's `schema_versions` rows (0: not created yet)."""
    return {component: int(found.get(component, 0)) for component in TABLES}


def known_table(table: str) -> str:
    """`table`, when it is one of the store's tables (`TABLES`); ValueError otherwise (it goes into SQL)."""
    if not any(table in names for names in TABLES.values()):
        raise ValueError(f"unknown table {table!r}")
    return table
