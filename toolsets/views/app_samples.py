"""Sample tool calls for previewing the MCP Apps outside a host (`truloop-mcp apps preview`): for each app, the
tool's arguments and result as a host would hand them over, shaped as the real tools answer, and the result a
stub host gives the app's own `tools/call`. Dates are from `today` on, so deadlines are still open."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

ZONE = "Asia/Seoul"
OFFSET = "+09:00"


@dataclass(frozen=True, slots=True)
class Sample:
    tool: str  # the tool whose result the app shows
    arguments: dict[str, Any]
    result: dict[str, Any]
    answer: dict[str, Any]  # what the stub host answers the app's tools/call (the call's arguments merged in)


def _at(day: dt.date, hour: int) -> str:
    return f"{day.isoformat()}T{hour:02d}:00:00{OFFSET}"


def samples(today: dt.date) -> dict[str, Sample]:
    """One sample per app, by the app's name."""
    first = today + dt.timedelta(days=14)
    days = [(first + dt.timedelta(days=n)).isoformat() for n in range(5)]
    deadline = _at(first - dt.timedelta(days=3), 18)
    dinner = {
        "id": "evt_preview",
        "title": "팀 회식 / Team dinner",
        "start": _at(first, 19),
        "end": _at(first + dt.timedelta(days=4), 21),
        "location": "강남역 / Gangnam, Seoul",
        "availability_deadline": deadline,
        "your_timezone": ZONE,
    }
    owner_view = {
        **dinner,
        "your_role": "owner",
        "invitees": [
            {"id": "minji", "display_name": "김민지", "responded": True, "available_dates": days[:2]},
            {"id": "junho", "display_name": "이준호", "responded": True, "available_dates": days[1:3]},
            {"id": "guest-hana", "display_name": "최하나", "responded": False, "available_dates": []},
        ],
        "availability_by_date": {days[0]: 1, days[1]: 2, days[2]: 1},
    }
    guest_view = {
        **dinner,
        "event_id": dinner["id"],
        "candidate_date_range": {"first": days[0], "last": days[-1]},
        "your_available_dates": days[1:2],
        "submitted_at": None,
    }
    saved = {"content": [{"type": "text", "text": "Saved (preview: nothing was sent)."}], "isError": False}
    return {
        "event": Sample(
            "get_events",
            {},
            {"content": [{"type": "text", "text": "1 event"}], "structuredContent": {"events": [owner_view]}},
            saved,
        ),
        "availability": Sample(
            "get_event_details",
            {"event_id": dinner["id"]},
            {"content": [{"type": "text", "text": dinner["title"]}], "structuredContent": guest_view},
            {**saved, "structuredContent": {**guest_view, "submitted_at": _at(today, 12)}},
        ),
        "confirm": Sample(
            "forget_memory",
            {"memory_id": "mem_preview"},
            {
                "resultType": "input_required",
                "inputRequests": {
                    "truloop/confirm/preview": {
                        "method": "elicitation/create",
                        "params": {
                            "message": "기억 1개를 지울까요? '주차는 B2' / Forget 1 memory? 'parking on B2'",
                            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
                            "_meta": {"truloop/fields": [["기억 / Memory", "주차는 B2 / parking on B2"]]},
                        },
                    }
                },
                "requestState": "preview",
            },
            {"content": [{"type": "text", "text": "Forgotten (preview: nothing was changed)."}], "isError": False},
        ),
    }
