"""The deployment's store, chosen once: the embedded SQLite file or the shared PostgreSQL database.

`StoreBackend` is what every backend provides (each component's store, its migrations, a readiness
check, closing); `open_backend` picks one from the settings. Opening one reads nothing, writes nothing
and imports no database driver: the database is opened on the first use of a component.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsets.infra.store.postgres.backend import PostgresBackend
from toolsets.infra.store.sqlite.backend import SqliteBackend

if TYPE_CHECKING:
    from pydantic import SecretStr

    from toolsets.infra.store.events import EventStore
    from toolsets.infra.store.feedback import FeedbackStore
    from toolsets.infra.store.inbox import InboxStore
    from toolsets.infra.store.knowledge import KnowledgeTables
    from toolsets.infra.store.memories import MemoryStore
    from toolsets.infra.store.schedules import ScheduleStore
    from toolsets.infra.store.users import UserStore


class StoreBackend(Protocol):
    """One deployment's store: its components, created on first use over one database."""

    @property
    def shared(self) -> bool:
        """True when other replicas read and write the same store (PostgreSQL)."""
        ...

    @property
    def location(self) -> str:
        """Where the data lives, for an operator: the SQLite file, or "the shared database" (never the URL)."""
        ...

    def describe(self) -> str:
        """The backend and where its data lives, for an operator (never the URL: it may hold a password)."""
        ...

    @property
    def users(self) -> UserStore: ...

    @property
    def events(self) -> EventStore: ...

    @property
    def inbox(self) -> InboxStore: ...

    @property
    def memories(self) -> MemoryStore: ...

    @property
    def schedules(self) -> ScheduleStore: ...

    @property
    def feedback(self) -> FeedbackStore:
        """Failed calls of plugin tool versions and the causes of canary holds and rollbacks."""
        ...

    @property
    def knowledge_tables(self) -> KnowledgeTables:
        """The knowledge index's tables (`KnowledgeIndex` keeps them in step with a docs folder)."""
        ...

    def migrations(self) -> dict[str, list[Any]]:
        """Each component's migrations on this backend (`inventory.TABLES` names the components)."""
        ...

    async def migrate(self) -> dict[str, int]:
        """Bring every component up to date; each one's version after."""
        ...

    async def versions(self) -> dict[str, int]:
        """Each component's schema version in the store (0: not created yet)."""
        ...

    async def count_rows(self, table: str) -> int:
        """Rows in one of the store's tables (`inventory.TABLES`; 0 when the table does not exist yet)."""
        ...

    async def ping(self) -> None:
        """Raises when the store cannot answer (for readiness checks)."""
        ...

    def close(self) -> None:
        """Release what can be released outside an event loop (the SQLite connection)."""
        ...

    async def aclose(self) -> None:
        """`close()`, and the shared database's connection pool (which lives in an event loop)."""
        ...


def open_backend(data_dir: Path, database_url: SecretStr | None) -> StoreBackend:
    """The shared PostgreSQL store when `database_url` is given, else the embedded one in `data_dir`
    (`truloop.sqlite3`). Nothing is opened until a component is first used."""
    if database_url is not None:
        return PostgresBackend(database_url.get_secret_value())
    return SqliteBackend(data_dir)
