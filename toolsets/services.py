"""What a deployment provides to the tools: the store, upstream clients, and ports.

Everything is created on first use, so a stdio session that only asks for the date opens
no database and imports no HTTP client. The deployment's choices are made where it is assembled:
the store's backend (the embedded SQLite store or the shared PostgreSQL one,
`toolsets.infra.store.backend.open_backend`) is passed in; Supermemory replaces the store's memories
when its key is set. Neither the store nor the clients make these choices.
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

    from toolsets.infra.store.backend import StoreBackend
    from toolsets.infra.store.events import EventStore
    from toolsets.infra.store.feedback import FeedbackStore
    from toolsets.infra.store.inbox import InboxStore
    from toolsets.infra.store.knowledge import KnowledgeIndex
    from toolsets.infra.store.memories import MemoryStore
    from toolsets.infra.store.schedules import ScheduleStore
    from toolsets.infra.store.users import UserStore
    from toolsets.infra.upstream.google_places import PlacesClient
    from toolsets.infra.upstream.retry_policy import Sleep
    from toolsets.pipeline.audit.writer import AuditSink
    from toolsets.scheduling.port import SchedulerPort
    from toolsets.views.changes import ResourceChanges


class DeliveryPort(Protocol):
    """Hands a relayed message to the recipient's device channel; True when a device took it."""

    async def deliver(self, recipient_id: str, message: Mapping[str, Any]) -> bool: ...


@dataclass
class Services:
    backend: StoreBackend  # the deployment's store (`open_backend`): opened on first use, not here
    data_dir: Path
    docs_dir: Path
    keys: UpstreamKeys = field(default_factory=UpstreamKeys)
    http_transport: httpx.AsyncBaseTransport | None = None  # None: the network; tests pass httpx.MockTransport
    retry_sleep: Sleep | None = None  # the upstream clients' backoff wait (None: anyio.sleep); tests skip it
    delivery: DeliveryPort | None = None
    scheduler: SchedulerPort | None = None  # the deployment's engine of scheduled runs; None: a front without one
    # opens the audit log's writer (`audit`) on its first use; None: no audit lines
    open_audit: Callable[[], AuditSink | None] | None = field(default=None, repr=False)
    # told when a document is re-indexed or an inbox gets a message (MCP resource subscriptions): one per services,
    # so every front over them hears the same changes; None: nobody
    resource_changes: ResourceChanges | None = field(default_factory=lambda: _resource_changes(), repr=False)
    # what the server says about its own start where a host shows it (the guide), e.g. that `--demo` added nothing;
    # given here, or noted (`note_at_start`) before serving; read only while serving
    start_notes: tuple[str, ...] = ()

    @classmethod
    def at(
        cls,
        data_dir: Path,
        *,
        docs_dir: Path | None = None,
        database_url: str | SecretStr | None = None,
        **options: Any,
    ) -> Services:
        """Services on the embedded store in `data_dir` (or on the PostgreSQL at `database_url`), for in-process use:
        `assemble(Services.at(Path("~/.local/share/truloop").expanduser()))`."""
        from toolsets.infra.store.backend import open_backend

        url = SecretStr(database_url) if isinstance(database_url, str) else database_url
        return cls(
            backend=open_backend(data_dir, url), data_dir=data_dir, docs_dir=docs_dir or data_dir / "docs", **options
        )

    @cached_property
    def audit(self) -> AuditSink | None:
        """The audit log's writer (toolsets/pipeline/audit), opened by `open_audit` when first asked for (a call's audit
        line, a health check), not at start; may also be set directly. None: no audit lines."""
        return self.open_audit() if self.open_audit is not None else None

    @cached_property
    def users(self) -> UserStore:
        return self.backend.users

    @cached_property
    def events(self) -> EventStore:
        return self.backend.events

    @cached_property
    def inbox(self) -> InboxStore:
        if self.resource_changes is not None:
            from toolsets.views.changes import WatchedInbox

            return WatchedInbox(lambda: self.backend.inbox, self.resource_changes)
        return self.backend.inbox

    @cached_property
    def memories(self) -> MemoryStore:
        return memory_store(self)

    @cached_property
    def schedules(self) -> ScheduleStore:
        return self.backend.schedules

    @cached_property
    def feedback(self) -> FeedbackStore:
        return self.backend.feedback

    @cached_property
    def knowledge(self) -> KnowledgeIndex:
        from toolsets.infra.store.knowledge.index import KnowledgeIndex

        changes = self.resource_changes
        return KnowledgeIndex(
            self.backend.knowledge_tables, self.docs_dir, on_change=changes.documents_changed if changes else None
        )

    @cached_property
    def places(self) -> PlacesClient:
        from toolsets.infra.upstream.google_places import PlacesClient

        return PlacesClient(self.keys.google_maps, transport=self.http_transport, sleep=self.retry_sleep)

    def note_at_start(self, note: str) -> None:
        """Something that happened at start the guide should say (e.g. that `--demo` added nothing); before serving."""
        self.start_notes = (*self.start_notes, note)

    async def ping_store(self) -> None:
        """Raises when the store cannot answer (for readiness checks)."""
        await self.backend.ping()

    def close(self) -> None:
        self.backend.close()

    async def aclose(self) -> None:
        """`close()`, and the shared database's connection pool (which lives in an event loop)."""
        await self.backend.aclose()


def _resource_changes() -> ResourceChanges:
    from toolsets.views.changes import ResourceChanges

    return ResourceChanges()


def memory_store(services: Services) -> MemoryStore:
    """Supermemory when a SUPERMEMORY_API_KEY is given (not blank), else the store's memories."""
    key = services.keys.supermemory
    if key is not None and key.get_secret_value().strip():
        from toolsets.infra.upstream.supermemory import SupermemoryMemories

        return SupermemoryMemories(key, transport=services.http_transport, sleep=services.retry_sleep)
    return services.backend.memories
