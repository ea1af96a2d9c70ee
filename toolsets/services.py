"""What a deployment provides to the tools: the embedded store, upstream clients, and ports.

Everything is created on first use, so a stdio session that only asks for the date opens
no database and imports no HTTP client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsets.store.db import Database

if TYPE_CHECKING:
    import httpx

    from toolsets.store.events import EventStore
    from toolsets.store.inbox import Inbox
    from toolsets.store.knowledge import KnowledgeIndex
    from toolsets.store.memories import MemoryBackend
    from toolsets.store.users import UserStore
    from toolsets.upstream.google_places import PlacesClient


class DeliveryPort(Protocol):
    """Hands a relayed message to the recipient's device channel; True when a device took it."""

    async def deliver(self, recipient_id: str, message: Mapping[str, Any]) -> bool: ...


@dataclass
class Services:
    data_dir: Path
    docs_dir: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    http_transport: Any = None  # an httpx transport; tests pass httpx.MockTransport
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
        from toolsets.store.memories import memory_backend

        return memory_backend(self)

    @cached_property
    def knowledge(self) -> KnowledgeIndex:
        from toolsets.store.knowledge import KnowledgeIndex

        return KnowledgeIndex(self.db, self.docs_dir)

    @cached_property
    def places(self) -> PlacesClient:
        from toolsets.upstream.google_places import PlacesClient

        return PlacesClient(self)

    def secret(self, name: str) -> str | None:
        value = self.env.get(name, "").strip()
        return value or None

    def http_client(self, *, timeout: float = 10.0, **kwargs: Any) -> httpx.AsyncClient:
        import httpx

        return httpx.AsyncClient(transport=self.http_transport, timeout=timeout, **kwargs)

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()


def services_of(ctx: Any) -> Services:
    """The services of a tool's context; a deployment without them is a configuration error."""
    services = getattr(ctx, "services", None)
    if not isinstance(services, Services):
        raise RuntimeError("this tool needs a Services object in ToolContext.services")
    return services
