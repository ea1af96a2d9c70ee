"""The resources a caller may list and read: the server guide, the docs folder, their inbox and their upcoming events.

Each is a read-only view of a store, scoped like the tools (`ViewScope`): reading the inbox marks nothing as read,
a guest sees only the events they are invited to, nobody sees another user's inbox (`truloop://inbox` is always the
caller's own). A URI that names nothing the caller may see is `UnknownResourceError`, whether it exists or not.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from toolsets.core.echo import echo
from toolsets.infra.clock import in_zone
from toolsets.views.scope import ViewScope
from toolsets.views.uris import (
    DOC_PREFIX,
    DOC_TEMPLATE,
    EVENT_PREFIX,
    EVENT_TEMPLATE,
    EVENTS_URI,
    GUIDE_URI,
    INBOX_URI,
    SCHEDULE_PREFIX,
    SCHEDULE_TEMPLATE,
    doc_uri,
    event_uri,
)

if TYPE_CHECKING:
    from toolsets.infra.store.events import EventRecord
    from toolsets.infra.store.schedules import Schedule
    from toolsets.services import Services

JSON = "application/json"
MARKDOWN = "text/markdown"
UPCOMING = dt.timedelta(days=30)
INBOX_SHOWN = 50


@dataclass(frozen=True, slots=True)
class ResourceEntry:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    size: int | None = None


@dataclass(frozen=True, slots=True)
class TemplateEntry:
    uri_template: str
    name: str
    title: str
    description: str
    mime_type: str | None


@dataclass(frozen=True, slots=True)
class ResourceBody:
    uri: str
    mime_type: str
    text: str


class UnknownResourceError(LookupError):
    """Nothing the caller may read at that URI; `str()` is what to tell them."""


class ResourceCatalog:
    def __init__(self, services: Services | None) -> None:
        self._services = services

    async def resources(self, scope: ViewScope) -> list[ResourceEntry]:
        """What `scope` may read, in a stable order: the guide, the inbox, the events, then the documents."""
        found = [
            ResourceEntry(GUIDE_URI, "guide", "Server guide / 서버 안내",
                          "What this server's tools do, in Korean and English", MARKDOWN),
        ]  # fmt: skip
        services = self._services
        if services is None:
            return found
        if scope.inbox:
            about = "Messages other users sent you, newest first (reading marks nothing)"
            found.append(ResourceEntry(INBOX_URI, "inbox", "My inbox / 받은 메시지", about, JSON))
        if scope.events:
            found.append(ResourceEntry(EVENTS_URI, "events", "Upcoming events / 다가오는 일정",
                                       "Your events of the next 30 days", JSON))  # fmt: skip
            for event in await self._upcoming(scope):
                found.append(ResourceEntry(event_uri(event.id), f"event {event.id}", event.title,
                                           f"{event.start} - {event.end}", JSON))  # fmt: skip
        if scope.docs:
            from toolsets.views.docs import list_documents

            for doc in await list_documents(services.docs_dir):
                found.append(ResourceEntry(doc_uri(doc.path), doc.path, doc.title, f"Document {doc.path}",
                                           doc.mime_type, doc.size))  # fmt: skip
        return found

    def templates(self, scope: ViewScope) -> list[TemplateEntry]:
        found = []
        if self._services is not None and scope.events:
            found.append(TemplateEntry(EVENT_TEMPLATE, "event", "Event / 일정",
                                       "One event you organise or are invited to, by id", JSON))  # fmt: skip
        if self._services is not None and scope.schedules:
            found.append(TemplateEntry(SCHEDULE_TEMPLATE, "schedule", "Scheduled run / 예약 실행",
                                       "One of your scheduled tool runs and its recent runs, by id", JSON))  # fmt: skip
        if self._services is not None and scope.docs:
            about = "A document of the knowledge base, by its path in the docs folder"
            found.append(TemplateEntry(DOC_TEMPLATE, "document", "Document / 문서", about, None))
        return found

    def may_see(self, scope: ViewScope, uri: str) -> bool:
        """Whether `uri` is of a kind `scope` may read (whether it exists is `read`'s to say)."""
        if uri == GUIDE_URI:
            return True
        if self._services is None:
            return False
        if uri == INBOX_URI:
            return scope.inbox
        if uri == EVENTS_URI or uri.startswith(EVENT_PREFIX):
            return scope.events
        if uri.startswith(DOC_PREFIX):
            return scope.docs
        if uri.startswith(SCHEDULE_PREFIX):
            return scope.schedules
        return False

    async def check(self, scope: ViewScope, uri: str) -> None:
        """`UnknownResourceError`, with the message `read` gives, unless `uri` names something `scope` may read
        now (nothing is read: a document is opened and its size taken, an event looked up)."""
        if not self.may_see(scope, uri):
            raise UnknownResourceError(_no_resource(uri))
        if uri.startswith(EVENT_PREFIX):
            if await self.event(scope, unquote(uri[len(EVENT_PREFIX) :])) is None:
                raise UnknownResourceError(_no_event(uri))
        elif uri.startswith(SCHEDULE_PREFIX):
            if await self._schedule(scope, uri) is None:
                raise UnknownResourceError(_no_schedule(uri))
        elif uri.startswith(DOC_PREFIX):
            from toolsets.views.docs import find_document

            assert self._services is not None
            path = unquote(uri[len(DOC_PREFIX) :])
            if await find_document(self._services.docs_dir, path) is None:
                raise UnknownResourceError(_no_document(path))

    async def read(self, scope: ViewScope, uri: str) -> ResourceBody:
        if not self.may_see(scope, uri):
            raise UnknownResourceError(_no_resource(uri))
        if uri == GUIDE_URI:
            from toolsets.views.guide import guide_text

            notes = self._services.start_notes if self._services is not None else ()
            return ResourceBody(uri, MARKDOWN, guide_text(scope, notes))
        services = self._services
        assert services is not None
        if uri == INBOX_URI:
            return ResourceBody(uri, JSON, _dump(await self._inbox(services, scope)))
        if uri == EVENTS_URI:
            views = [await self._view(services, scope, event) for event in await self._upcoming(scope)]
            return ResourceBody(uri, JSON, _dump({"events": views}))
        if uri.startswith(EVENT_PREFIX):
            event = await self.event(scope, unquote(uri[len(EVENT_PREFIX) :]))
            if event is None:
                raise UnknownResourceError(_no_event(uri))
            return ResourceBody(uri, JSON, _dump(await self._view(services, scope, event)))
        if uri.startswith(SCHEDULE_PREFIX):
            return ResourceBody(uri, JSON, _dump(await self._schedule_view(services, scope, uri)))
        from toolsets.views.docs import DocNotFoundError, document_text

        path = unquote(uri[len(DOC_PREFIX) :])
        try:
            doc, text = await document_text(services.docs_dir, path)
        except DocNotFoundError:
            raise UnknownResourceError(_no_document(path)) from None
        return ResourceBody(uri, doc.mime_type, text)

    async def event(self, scope: ViewScope, event_id: str) -> EventRecord | None:
        """The event with this id if `scope` may see it (a guest: only as an invitee)."""
        if self._services is None or not scope.events or not event_id or len(event_id) > 64:
            return None
        event = await self._services.events.get(event_id)
        if event is None or not event.involves(scope.user_id):
            return None
        if scope.invitations_only and scope.user_id not in event.invitee_ids():
            return None
        return event

    async def _schedule(self, scope: ViewScope, uri: str) -> Schedule | None:
        """The schedule `uri` names if it is the caller's."""
        schedule_id = unquote(uri[len(SCHEDULE_PREFIX) :])
        if self._services is None or not scope.schedules or not schedule_id or len(schedule_id) > 64:
            return None
        schedule = await self._services.schedules.get(schedule_id)
        return schedule if schedule is not None and schedule.owner_id == scope.user_id else None

    async def _schedule_view(self, services: Services, scope: ViewScope, uri: str) -> dict[str, Any]:
        from toolsets.assistant.schedule_tools import shown

        schedule = await self._schedule(scope, uri)
        if schedule is None:
            raise UnknownResourceError(_no_schedule(uri))
        runs = await services.schedules.recent_runs(schedule.id)
        return {
            "schedule": shown(schedule).model_dump(mode="json"),
            "arguments": schedule.arguments,
            "recent_runs": [run.model_dump(mode="json", exclude={"replica"}) for run in runs],
        }

    async def upcoming(self, scope: ViewScope) -> list[EventRecord]:
        return await self._upcoming(scope)

    async def _upcoming(self, scope: ViewScope) -> list[EventRecord]:
        services = self._services
        if services is None or not scope.events:
            return []
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        if scope.invitations_only:
            invited = await services.events.invited_events(scope.user_id)
            return [e for e in invited if dt.datetime.fromisoformat(e.end) >= now]
        return await services.events.list_for(scope.user_id, now, now + UPCOMING)

    async def _inbox(self, services: Services, scope: ViewScope) -> dict[str, Any]:
        found = await services.inbox.messages(scope.user_id, unread_only=False, limit=INBOX_SHOWN, mark_read=False)
        shown = [
            {
                "id": m.id,
                "sender_id": m.sender_id,
                "text": m.text,
                "read": bool(m.read_at),
                "created_at": in_zone(m.created_at, scope.caller.timezone),
            }
            for m in found
        ]
        return {"messages": shown}

    async def _view(self, services: Services, scope: ViewScope, event: EventRecord) -> dict[str, Any]:
        from toolsets.assistant.event_views import event_view

        return (await event_view(services, event, scope.caller)).model_dump(mode="json")


def _no_resource(uri: str) -> str:
    return f"No resource {echo(uri)!r} that you can read; resources/list shows what there is."


def _no_event(uri: str) -> str:
    return f"No event {echo(uri)!r} that you can see; read {EVENTS_URI} for your events."


def _no_schedule(uri: str) -> str:
    return f"No schedule {echo(uri)!r} of yours; list_schedules shows them."


def _no_document(path: str) -> str:
    return f"No document {echo(path)!r} in the knowledge base; resources/list shows the documents."


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
