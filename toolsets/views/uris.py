"""The resources' URIs: fixed ones, and those made from a document's path or an event's id."""

from __future__ import annotations

from urllib.parse import quote

GUIDE_URI = "truloop://guide"
INBOX_URI = "truloop://inbox"
EVENTS_URI = "truloop://events"
EVENT_PREFIX = "truloop://events/"
DOC_PREFIX = "truloop://docs/"
DOC_TEMPLATE = "truloop://docs/{path}"
EVENT_TEMPLATE = "truloop://events/{event_id}"
SCHEDULE_PREFIX = "truloop://schedules/"
SCHEDULE_TEMPLATE = "truloop://schedules/{schedule_id}"


def doc_uri(path: str) -> str:
    return DOC_PREFIX + quote(path, safe="/")


def event_uri(event_id: str) -> str:
    return EVENT_PREFIX + quote(event_id, safe="")
