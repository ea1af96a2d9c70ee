"""The shared store as a backend: one PostgreSQL database, each component's PostgreSQL implementation over it.

Nothing is opened or imported until a component is first used (psycopg is imported when the
connection pool first opens).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from toolsets.infra.store.inventory import by_component, component_versions, known_table, migrate_all

if TYPE_CHECKING:
    from toolsets.infra.store.events.postgres import PgEventStore
    from toolsets.infra.store.feedback.postgres import PgFeedback
    from toolsets.infra.store.inbox.postgres import PgInbox
    from toolsets.infra.store.knowledge.postgres import PgKnowledgeTables
    from toolsets.infra.store.memories.postgres import PgMemories
    from toolsets.infra.store.postgres.database import PgDatabase
    from toolsets.infra.store.schedules.postgres import PgSchedules
    from toolsets.infra.store.users.postgres import PgUserStore


class PostgresBackend:
    """The shared store at `url` (`postgresql://user:pass@host:5432/db`), read and written by every replica."""

    shared = True
    location = "the shared database"

    def __init__(self, url: str) -> None:
        self._url = url

    def __repr__(self) -> str:  # the URL may carry a password
        return "PostgresBackend(<url hidden>)"

    def describe(self) -> str:
        return "PostgreSQL (--database-url)"

    @cached_property
    def pg(self) -> PgDatabase:
        from toolsets.infra.store.postgres.database import PgDatabase

        return PgDatabase(self._url)

    @cached_property
    def users(self) -> PgUserStore:
        from toolsets.infra.store.users.postgres import PgUserStore

        return PgUserStore(self.pg)

    @cached_property
    def events(self) -> PgEventStore:
        from toolsets.infra.store.events.postgres import PgEventStore

        return PgEventStore(self.pg)

    @cached_property
    def inbox(self) -> PgInbox:
        from toolsets.infra.store.inbox.postgres import PgInbox

        return PgInbox(self.pg)

    @cached_property
    def memories(self) -> PgMemories:
        from toolsets.infra.store.memories.postgres import PgMemories

        return PgMemories(self.pg)

    @cached_property
    def schedules(self) -> PgSchedules:
        from toolsets.infra.store.schedules.postgres import PgSchedules

        return PgSchedules(self.pg)

    @cached_property
    def feedback(self) -> PgFeedback:
        from toolsets.infra.store.feedback.postgres import PgFeedback

        return PgFeedback(self.pg)

    @cached_property
    def knowledge_tables(self) -> PgKnowledgeTables:
        from toolsets.infra.store.knowledge.postgres import PgKnowledgeTables

        return PgKnowledgeTables(self.pg)

    def migrations(self) -> dict[str, list[Any]]:
        from toolsets.infra.store.events import postgres as events
        from toolsets.infra.store.inbox import postgres as inbox
        from toolsets.infra.store.knowledge import postgres as knowledge
        from toolsets.infra.store.memories import postgres as memories
        from toolsets.infra.store.users import postgres as users

        return by_component(users, events, inbox, memories, knowledge)

    async def migrate(self) -> dict[str, int]:
        """Every component brought up to date (each under the migration lock, so replicas migrate once)."""
        await migrate_all(self.pg, self.migrations())
        return await self.versions()

    async def versions(self) -> dict[str, int]:
        return component_versions(await self.pg.versions())

    async def count_rows(self, table: str) -> int:
        known_table(table)
        async with self.pg.transaction() as conn:
            row = await (await conn.execute("SELECT to_regclass(%s) IS NOT NULL AS present", (table,))).fetchone()
            if not row or not row["present"]:
                return 0
            counted = await (await conn.execute(f"SELECT count(*) AS n FROM {table}")).fetchone()
        return int(counted["n"]) if counted else 0

    async def ping(self) -> None:
        await self.pg.ping()

    def close(self) -> None:
        """Nothing to release outside an event loop: the connection pool closes in `aclose`."""

    async def aclose(self) -> None:
        if "pg" in self.__dict__:
            await self.pg.close()
