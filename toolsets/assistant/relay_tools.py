"""relay toolset: messages between users, worded by an agent limited to the notification-safe tools."""

import logging
from typing import Annotated

from pydantic import BaseModel, Field

from toolsets.assistant.user_lookup import resolve_one
from toolsets.core.annotations import ToolHints
from toolsets.core.context import ComposeRequest, ToolContext
from toolsets.core.errors import ErrorCode, InputRequired, ToolError, ToolInputError
from toolsets.core.toolset import Toolset
from toolsets.infra.clock import in_zone
from toolsets.infra.store.errors import RateLimited
from toolsets.services import Services

logger = logging.getLogger("truloop.relay")

relay_toolset = Toolset("relay")

MAX_MESSAGE = 2000
MAX_NOTIFICATION = 1000


class SentMessage(BaseModel):
    message_id: str = Field(description="Id of the stored message")
    recipient_id: str = Field(description="Who receives it")
    recipient_name: str | None = Field(description="Their display name")
    text: str = Field(description="The notification text the recipient sees")
    composed_by: str = Field(description="'client-model' when your client's model wrote it, else 'template'")
    delivered_to_device: bool = Field(description="True when a device of the recipient took it right away")


class InboxEntry(BaseModel):
    id: str = Field(description="Message id")
    sender_id: str = Field(description="Who sent it")
    text: str = Field(description="The notification text")
    created_at: str = Field(description="When it was sent, ISO 8601 in your time zone")
    read: bool = Field(description="Whether it had been read before this call")


class InboxPage(BaseModel):
    messages: list[InboxEntry] = Field(description="Newest first")


def template_text(sender_name: str, message: str) -> str:
    return f"Message from {sender_name}: {message}"


@relay_toolset.tool(hints=ToolHints(open_world=True), asks_client=True)
async def send_message_to_user(
    ctx: ToolContext[Services],
    recipient: Annotated[
        str, Field(description="Who to notify: username, email, phone number or user id", min_length=1, max_length=200)
    ],
    message: Annotated[
        str, Field(description="What you want them to know, in your own words", min_length=1, max_length=MAX_MESSAGE)
    ],
) -> SentMessage:
    """Send a message to another user: it is worded as a short notification, stored in their inbox and pushed to
    their device when one is connected. Limited per sender (a few per minute)."""
    services = ctx.deps
    users = services.users
    text = message.strip()
    if not text:
        raise ToolInputError("message must not be blank.")
    target = await resolve_one(users, recipient)
    if target.id == ctx.caller.user_id:
        raise ToolInputError("That is you; to remember something for yourself use save_memory.")
    me = await users.get(ctx.caller.user_id)
    sender_name = (me.display_name or me.username) if me else None
    sender_name = sender_name or ctx.caller.user_id
    notification, composed_by = None, "template"
    safe_tools = ctx.profiles.get("notification-safe")
    if ctx.composer is not None and safe_tools is not None:
        request = ComposeRequest(
            sender_name=sender_name,
            recipient_name=target.display_name or target.username or target.id,
            message=text,
            recipient_timezone=ctx.caller.timezone,
            tools=safe_tools,
        )
        try:
            notification = await ctx.composer.compose(request, ctx)
        except (ToolError, InputRequired):
            raise
        except Exception:
            logger.warning("composing a notification failed; using the template", exc_info=True)
        if notification and notification.strip():
            notification, composed_by = notification.strip()[:MAX_NOTIFICATION], "client-model"
    if composed_by == "template":
        notification = template_text(sender_name, text)
    assert notification is not None
    try:
        stored = await services.inbox.send(
            sender_id=ctx.caller.user_id, recipient_id=target.id, text=notification, original=text,
            composed_by=composed_by,
        )  # fmt: skip
    except RateLimited as limited:
        raise ToolError(
            f"You have sent too many messages; wait {limited.retry_after_seconds} s before sending another.",
            code=ErrorCode.RATE_LIMITED,
            retryable=True,
        ) from None
    delivered = False
    if services.delivery is not None:
        try:
            delivered = await services.delivery.deliver(target.id, {"type": "relay", **stored.model_dump()})
        except Exception:
            logger.warning("device delivery failed; the message stays in the inbox", exc_info=True)
        if delivered:
            await services.inbox.mark_delivered(stored.id)
    return SentMessage(
        message_id=stored.id, recipient_id=target.id, recipient_name=target.display_name, text=notification,
        composed_by=composed_by, delivered_to_device=delivered,
    )  # fmt: skip


@relay_toolset.tool(hints=ToolHints(idempotent=False))
async def get_inbox(
    ctx: ToolContext[Services],
    unread_only: Annotated[bool, Field(description="Only messages not read yet")] = True,
    limit: Annotated[int, Field(description="How many messages at most (1-50)", ge=1, le=50)] = 20,
) -> InboxPage:
    """Read the messages other users sent you (newest first); they are marked as read."""
    services = ctx.deps
    found = await services.inbox.messages(ctx.caller.user_id, unread_only=unread_only, limit=limit, mark_read=True)
    return InboxPage(
        messages=[
            InboxEntry(
                id=m.id,
                sender_id=m.sender_id,
                text=m.text,
                created_at=in_zone(m.created_at, ctx.caller.timezone),
                read=m.read_at is not None,
            )
            for m in found
        ]
    )
