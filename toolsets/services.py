"""What a deployment provides to the tools: the embedded store, upstream clients, and ports.

Everything is created on first use, so a stdio session that only asks for the date opens
no database and imports no HTTP client. This is also where the deployment's choices are made
(Supermemory or the embedded memory store), so neither the store nor the clients make them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsets.store.db import Database
from toolsets.upstream.keys import UpstreamKeys

if TYPE_CHECKING:
    import httpx

    from toolsets.store.events import EventStore
    from toolsets.store.inbox import Inbox
    from toolsets.store.knowledge import KnowledgeIndex
    from toolsets.store.memories import MemoryBackend
    from toolsets.store.users import UserStore
    from toolsets.upstream.google_places import PlacesClient
    from toolsets.upstream.retry_policy import Sleep


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

    @cached_property
    def db(self) -> Database:
        return Database(self.data_dir / "truloop.sqlite3")

    @cached_property
    def users(self) -> UserStore:
        from toolsets.store.users import UserStore

        return UserStore(self.db)

    @cached_property
    def events(self) -> EventStore:
        from toolsets.store.events import EventStore

        return EventStore(self.db)

    @cached_property
    def inbox(self) -> Inbox:
        from toolsets.store.inbox import Inbox

        return Inbox(self.db)

    @cached_property
    def memories(self) -> MemoryBackend:
        return memory_backend(self)

    @cached_property
    def knowledge(self) -> KnowledgeIndex:
        from toolsets.store.knowledge import KnowledgeIndex

        return KnowledgeIndex(self.db, self.docs_dir)

    @cached_property
    def places(self) -> PlacesClient:
        from toolsets.upstream.google_places import PlacesClient

        return PlacesClient(self.keys.google_maps, transport=self.http_transport, sleep=self.retry_sleep)

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()


def memory_backend(services: Services) -> MemoryBackend:
    """Supermemory when a SUPERMEMORY_API_KEY is given (not blank), else the embedded store."""
    key = services.keys.supermemory
    if key is not None and key.get_secret_value().strip():
        from toolsets.upstream.supermemory import SupermemoryMemories

        return SupermemoryMemories(key, transport=services.http_transport, sleep=services.retry_sleep)
    from toolsets.store.memories import SqliteMemories

    return SqliteMemories(services.db)
