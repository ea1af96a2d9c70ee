"""The embedded store as a backend: one SQLite file, each component's SQLite implementation over it.

Nothing is opened or imported until a component is first used (the stdio server answers `initialize`
without loading `sqlite3`).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsets.infra.store.inventory import by_component, component_versions, known_table, migrate_all

if TYPE_CHECKING:
    import sqlite3

    from toolsets.infra.store.events.sqlite import SqliteEventStore
    from toolsets.infra.store.feedback.sqlite import SqliteFeedback
    from toolsets.infra.store.inbox.sqlite import SqliteInbox
    from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables
    from toolsets.infra.store.memories.sqlite import SqliteMemories
    from toolsets.infra.store.schedules.sqlite import SqliteSchedules
    from toolsets.infra.store.sqlite.database import Database
    from toolsets.infra.store.users.sqlite import SqliteUserStore

FILE_NAME = "truloop.sqlite3"


class SqliteBackend:
    """The embedded store in `data_dir` (its `truloop.sqlite3`), for one process."""

    shared = False

    def __init__(self, data_dir: Path, *, file_name: str = FILE_NAME) -> None:
        self.path = Path(data_dir) / file_name

    @classmethod
    def file(cls, path: Path) -> SqliteBackend:
        """The embedded store in the file `path` (`truloop-mcp db copy --from sqlite:PATH`)."""
        return cls(path.parent, file_name=path.name)

    def __repr__(self) -> str:
        return f"SqliteBackend({str(self.path)!r})"

    @property
    def location(self) -> str:
        return str(self.path)

    def describe(self) -> str:
        return f"SQLite {self.path}"

    @cached_property
    def db(self) -> Database:
        from toolsets.infra.store.sqlite.database import Database

        return Database(self.path)

    @cached_property
    def users(self) -> SqliteUserStore:
        from toolsets.infra.store.users.sqlite import SqliteUserStore

        return SqliteUserStore(self.db)

    @cached_property
    def events(self) -> SqliteEventStore:
        from toolsets.infra.store.events.sqlite import SqliteEventStore

        return SqliteEventStore(self.db)

    @cached_property
    def inbox(self) -> SqliteInbox:
        from toolsets.infra.store.inbox.sqlite import SqliteInbox

        return SqliteInbox(self.db)

    @cached_property
    def memories(self) -> SqliteMemories:
        from toolsets.infra.store.memories.sqlite import SqliteMemories

        return SqliteMemories(self.db)

    @cached_property
    def schedules(self) -> SqliteSchedules:
        from toolsets.infra.store.schedules.sqlite import SqliteSchedules

        return SqliteSchedules(self.db)

    @cached_property
    def feedback(self) -> SqliteFeedback:
        from toolsets.infra.store.feedback.sqlite import SqliteFeedback

        return SqliteFeedback(self.db)

    @cached_property
    def knowledge_tables(self) -> SqliteKnowledgeTables:
        from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables

        return SqliteKnowledgeTables(self.db)

    def migrations(self) -> dict[str, list[Any]]:
        from toolsets.infra.store.events import sqlite as events
        from toolsets.infra.store.inbox import sqlite as inbox
        from toolsets.infra.store.knowledge import sqlite as knowledge
        from toolsets.infra.store.memories import sqlite as memories
        from toolsets.infra.store.users import sqlite as users

        return by_component(users, events, inbox, memories, knowledge)

    async def migrate(self) -> dict[str, int]:
        await migrate_all(self.db, self.migrations())
        return await self.versions()

    async def versions(self) -> dict[str, int]:
        found = await self.db.read(
            lambda conn: {row[0]: row[1] for row in conn.execute("SELECT component, version FROM schema_versions")}
        )
        return component_versions(found)

    async def count_rows(self, table: str) -> int:
        known_table(table)

        def count(conn: sqlite3.Connection) -> int:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) if exists else 0

        return await self.db.read(count)

    async def ping(self) -> None:
        await self.db.read(lambda conn: conn.execute("SELECT 1").fetchone())

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()

    async def aclose(self) -> None:
        self.close()
