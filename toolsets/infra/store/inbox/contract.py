"""The inbox's contract: a relayed message, and the operations the relay tools use.

`sqlite.SqliteInbox` (the embedded store) and `postgres.PgInbox` (the shared store) both fulfil
`InboxStore`; the backend of the deployment picks one (`toolsets.infra.store.backend`).
"""

from typing import Protocol

from pydantic import BaseModel


class InboxMessage(BaseModel):
    id: str
    recipient_id: str
    sender_id: str
    text: str
    original: str
    composed_by: str
    created_at: str
    delivered_at: str | None = None
    read_at: str | None = None


class InboxStore(Protocol):
    """Each recipient's relayed messages, and the per-sender rate limit that guards them."""

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
        """Store a message unless the sender is over the rate limit (`RateLimited`; checked and written atomically).
        `rate_limited=False`: the deployment's own messages (a scheduled run's result), which no person sends."""
        ...

    async def mark_delivered(self, message_id: str) -> None: ...

    async def messages(
        self, recipient_id: str, *, unread_only: bool, limit: int, mark_read: bool
    ) -> list[InboxMessage]:
        """The recipient's messages, newest first; `mark_read` marks the ones returned as read."""
        ...
