"""What a deployment provides to the tools: the store, upstream clients, and ports.

Everything is created on first use, so a stdio session that only asks for the date opens
no database and imports no HTTP client. This is also where the deployment's choices are made
(the embedded SQLite store or the shared PostgreSQL one with `database_url`; Supermemory or the
store's memories), so neither the store nor the clients make them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import SecretStr

from toolsets.infra.upstream.keys import UpstreamKeys

if TYPE_CHECKING:
    import httpx

    from toolsets.infra.store.db import Database
    from toolsets.infra.store.events import EventStore
    from toolsets.infra.store.inbox import Inbox
    from toolsets.infra.store.knowledge import KnowledgeIndex
    from toolsets.infra.store.memories import MemoryBackend
    from toolsets.infra.store.postgres.database import PgDatabase
    from toolsets.infra.store.users import UserStore
    from toolsets.infra.upstream.google_places import PlacesClient
    from toolsets.infra.upstream.retry_policy import Sleep
    from toolsets.pipeline.audit.writer import AuditSink


class DeliveryPort(Protocol):
    """Hands a relayed message to the recipient's device channel; True when a device took it."""

    async def deliver(self, recipient_id: str, message: Mapping[str, Any]) -> bool: ...


@dataclass
class Services:
    data_dir: Path
    docs_dir: Path
    keys: UpstreamKeys = field(default_factory=UpstreamKeys)
    http_transport: httpx.AsyncBaseTransport | None = None  # None: the network; tests pass httpx.MockTransport
    retry_sleep: Sleep | None = None  # the upstream clients' backoff wait (None: anyio.sleep); tests skip it
    delivery: DeliveryPort | None = None
    # opens the audit log's writer (`audit`) on its first use; None: no audit lines
    open_audit: Callable[[], AuditSink | None] | None = field(default=None, repr=False)
    database_url: SecretStr | None = field(default=None, repr=False)  # postgresql://...: the shared store

    @cached_property
    def audit(self) -> AuditSink | None:
        """The audit log's writer (toolsets/pipeline/audit), opened by `open_audit` when first asked for (a call's audit
        line, a health check), not at start; may also be set directly. None: no audit lines."""
        return self.open_audit() if self.open_audit is not None else None

    @property
    def shared_store(self) -> bool:
        """True when the domain stores live in the shared PostgreSQL database rather than SQLite."""
        return self.database_url is not None

    @cached_property
    def db(self) -> Database:
        from toolsets.infra.store.db import Database

        return Database(self.data_dir / "truloop.sqlite3")

    @cached_property
    def pg(self) -> PgDatabase:
        from toolsets.infra.store.postgres.database import PgDatabase

        if self.database_url is None:
            raise RuntimeError("no database_url: this deployment uses the embedded SQLite store")
        return PgDatabase(self.database_url.get_secret_value())

    @property
    def store(self) -> Database | PgDatabase:
        """The database the domain stores use: the shared PostgreSQL one, or the embedded SQLite file."""
        return self.pg if self.shared_store else self.db

    @cached_property
    def users(self) -> UserStore:
        if self.shared_store:
            from toolsets.infra.store.postgres.users import PgUserStore

            return PgUserStore(self.pg)
        from toolsets.infra.store.users import UserStore

        return UserStore(self.db)

    @cached_property
    def events(self) -> EventStore:
        if self.shared_store:
            from toolsets.infra.store.postgres.events import PgEventStore

            return PgEventStore(self.pg)
        from toolsets.infra.store.events import EventStore

        return EventStore(self.db)

    @cached_property
    def inbox(self) -> Inbox:
        if self.shared_store:
            from toolsets.infra.store.postgres.inbox import PgInbox

            return PgInbox(self.pg)
        from toolsets.infra.store.inbox import Inbox

        return Inbox(self.db)

    @cached_property
    def memories(self) -> MemoryBackend:
        return memory_backend(self)

    @cached_property
    def knowledge(self) -> KnowledgeIndex:
        from toolsets.infra.store.knowledge import KnowledgeIndex

        if self.shared_store:
            from toolsets.infra.store.postgres.knowledge import PgKnowledgeTables

            return KnowledgeIndex(PgKnowledgeTables(self.pg), self.docs_dir)
        return KnowledgeIndex(self.db, self.docs_dir)

    @cached_property
    def places(self) -> PlacesClient:
        from toolsets.infra.upstream.google_places import PlacesClient

        return PlacesClient(self.keys.google_maps, transport=self.http_transport, sleep=self.retry_sleep)

    async def ping_store(self) -> None:
        """Raises when the store cannot answer (for readiness checks)."""
        if self.shared_store:
            await self.pg.ping()
        else:
            await self.db.read(lambda conn: conn.execute("SELECT 1").fetchone())

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()

    async def aclose(self) -> None:
        """`close()`, and the shared database's connection pool (which lives in an event loop)."""
        self.close()
        if "pg" in self.__dict__:
            await self.pg.close()


def memory_backend(services: Services) -> MemoryBackend:
    """Supermemory when a SUPERMEMORY_API_KEY is given (not blank), else the embedded store."""
    key = services.keys.supermemory
    if key is not None and key.get_secret_value().strip():
        from toolsets.infra.upstream.supermemory import SupermemoryMemories

        return SupermemoryMemories(key, transport=services.http_transport, sleep=services.retry_sleep)
    if services.shared_store:
        from toolsets.infra.store.postgres.memories import PgMemories

        return PgMemories(services.pg)
    from toolsets.infra.store.memories import SqliteMemories

    return SqliteMemories(services.db)
