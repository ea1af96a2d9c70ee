"""Who hears that a resource changed: a document of the docs folder (when the knowledge index notices it while
re-indexing) or a user's inbox (a new message).

One `ResourceChanges` per deployment. The stores tell it (`documents_changed`, `inbox_changed`); it tells its
listeners (each MCP server, which tells the sessions subscribed to that URI). Built with a `relay` (Redis pub/sub,
by the composition root) a change is also sent to the other replicas, whose hubs `deliver` it to their own listeners.
Listeners are held weakly: a server that is gone stops hearing without unsubscribing.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import TaskStatus

from toolsets.views.uris import INBOX_URI, doc_uri

if TYPE_CHECKING:
    from toolsets.infra.store.inbox import InboxMessage, InboxStore

logger = logging.getLogger("truloop.resources")

BATCH_URIS = 200  # documents per change (a first index of a large folder is a few changes, not thousands)
WATCH_SECONDS = 3.0  # how often the docs folder is looked at while documents are subscribed to
DELIVER_SECONDS = 5.0  # a listener that cannot deliver in time (a client not reading) is skipped


@dataclass(frozen=True, slots=True)
class ResourceChange:
    uris: tuple[str, ...]  # the resources that changed (none for a change of the list alone)
    listed: bool = False  # resources came or went: the list changed
    user_id: str | None = None  # whose resources they are; None: everyone's who may see them (documents)


Listener = Callable[[ResourceChange], Awaitable[None]]


class ChangeRelay(Protocol):
    """Sends a change to the other replicas (their hubs `deliver` it), while it runs."""

    async def send(self, change: ResourceChange) -> None: ...

    async def run(self, deliver: Listener, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Relay until cancelled: `send` publishes meanwhile, and what the other replicas publish goes to `deliver`
        (the hub's)."""
        ...


class ResourceChanges:
    def __init__(self, relay: ChangeRelay | None = None) -> None:
        """`relay`: how changes reach the other replicas and theirs reach here (None: this replica alone)."""
        self._listeners: list[weakref.ref[Any]] = []
        self._relay = relay
        self._demand: list[weakref.ref[Any]] = []  # whether someone here is subscribed to a document

    @property
    def relay(self) -> ChangeRelay | None:
        return self._relay

    async def relaying(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the relay (if any) until cancelled: changes go to the other replicas, and theirs come here."""
        if self._relay is None:
            task_status.started()
            return
        await self._relay.run(self.deliver, task_status=task_status)

    def add_demand(self, wants_documents: Callable[[], bool]) -> None:
        """`wants_documents()` says whether a session is subscribed to a document (held weakly, like listeners)."""
        ref = weakref.WeakMethod(wants_documents) if inspect.ismethod(wants_documents) else weakref.ref(wants_documents)
        self._demand.append(ref)

    def documents_wanted(self) -> bool:
        self._demand = [ref for ref in self._demand if ref() is not None]
        return any(wants() for ref in list(self._demand) if (wants := ref()) is not None)

    def subscribe(self, listener: Listener) -> None:
        ref: weakref.ref[Any] = weakref.WeakMethod(listener) if inspect.ismethod(listener) else weakref.ref(listener)
        self._listeners.append(ref)

    async def documents_changed(self, paths: Iterable[str], *, listed: bool = False) -> None:
        """The knowledge index re-indexed these documents (changed or removed); `listed`: documents came or went."""
        uris = [doc_uri(path) for path in paths]
        for start in range(0, max(len(uris), 1), BATCH_URIS):
            await self.publish(ResourceChange(tuple(uris[start : start + BATCH_URIS]), listed=listed and start == 0))

    async def inbox_changed(self, user_id: str) -> None:
        await self.publish(ResourceChange((INBOX_URI,), user_id=user_id))

    async def schedule_changed(self, user_id: str, uri: str) -> None:
        """One of the user's scheduled runs ran, or the schedule changed."""
        await self.publish(ResourceChange((uri,), user_id=user_id))

    async def watch_documents(self, refresh: Callable[[], Awaitable[Any]], every: float = WATCH_SECONDS) -> None:
        """While documents are subscribed to, have the knowledge index look at the folder every `every` seconds
        (its refresh tells `documents_changed` what it re-indexed). Runs until cancelled."""
        while True:
            await anyio.sleep(every)
            if self.documents_wanted():
                try:
                    await refresh()
                except Exception:  # a missing folder, a store away: the next round tries again
                    logger.debug("watching the docs folder: the refresh failed", exc_info=True)

    async def publish(self, change: ResourceChange) -> None:
        """Tell this replica's listeners, and the other replicas through the relay."""
        await self.deliver(change)
        if self._relay is not None:
            try:
                await self._relay.send(change)
            except Exception:
                logger.warning("could not relay a resource change to the other replicas", exc_info=True)

    async def deliver(self, change: ResourceChange) -> None:
        """Tell this replica's listeners (a change from here, or one another replica relayed)."""
        self._listeners = [ref for ref in self._listeners if ref() is not None]
        for ref in list(self._listeners):
            listener = ref()
            if listener is None:
                continue
            with anyio.move_on_after(DELIVER_SECONDS):
                try:
                    await listener(change)
                except Exception:
                    logger.warning("a resource-change listener failed", exc_info=True)


class WatchedInbox:
    """An `InboxStore` that tells `changes` about each message it stores (the store itself is opened on first use)."""

    def __init__(self, store: Callable[[], InboxStore], changes: ResourceChanges) -> None:
        self._open = store
        self._store: InboxStore | None = None
        self.changes = changes

    @property
    def store(self) -> InboxStore:
        if self._store is None:
            self._store = self._open()
        return self._store

    async def send(
        self,
        *,
        sender_id: str,
        recipient_id: str,
        text: str,
        original: str,
        composed_by: str,
        rate_limited: bool = True,
    ) -> InboxMessage:
        sent = await self.store.send(
            sender_id=sender_id, recipient_id=recipient_id, text=text, original=original, composed_by=composed_by,
            rate_limited=rate_limited,
        )  # fmt: skip
        await self.changes.inbox_changed(recipient_id)
        return sent

    async def mark_delivered(self, message_id: str) -> None:
        await self.store.mark_delivered(message_id)

    async def messages(
        self, recipient_id: str, *, unread_only: bool, limit: int, mark_read: bool
    ) -> list[InboxMessage]:
        return await self.store.messages(recipient_id, unread_only=unread_only, limit=limit, mark_read=mark_read)

    def __getattr__(self, name: str) -> Any:  # anything else a backend's inbox offers (e.g. its tables for copying)
        return getattr(self.store, name)
