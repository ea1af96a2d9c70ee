"""Text a person reads is in their language (Korean or English; other tags read English): confirmation questions that
name their object in the caller's zone, labelled values for any other tool, schedule results as sentences, the
catalog itself."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.people import directory
from toolsets.assembly import assemble
from toolsets.core.context import Caller, ConfirmRequest, Decision
from toolsets.core.envelope import ToolCancelled, ToolOk
from toolsets.front_door import FrontDoor
from toolsets.services import Services

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

NEXT_YEAR = dt.date.today().year + 1
KO = Caller("alice", timezone="Asia/Seoul", locale="ko-KR")
EN = Caller("alice", timezone="UTC", locale="en")


class Asked:
    """A confirmer that records each question and says no (nothing is changed)."""

    def __init__(self) -> None:
        self.requests: list[ConfirmRequest] = []

    async def confirm(self, request: ConfirmRequest) -> Decision:
        self.requests.append(request)
        return Decision.DECLINED


async def asked_about(door: FrontDoor, caller: Caller, name: str, arguments: dict[str, Any]) -> ConfirmRequest:
    asked = Asked()
    ctx = door.context_for(caller, "member", confirmer=asked)
    outcome = await door.call(ctx, name, arguments)
    assert isinstance(outcome, ToolCancelled), outcome
    (request,) = asked.requests
    return request


async def made_event(door: FrontDoor, caller: Caller, title: str) -> str:
    start = f"{NEXT_YEAR}-03-10T19:00:00+09:00"
    end = f"{NEXT_YEAR}-03-10T21:00:00+09:00"
    ctx = door.context_for(caller, "member")
    outcome = await door.call(ctx, "create_event", {"title": title, "start": start, "end": end})
    assert isinstance(outcome, ToolOk), outcome
    return str(outcome.data.model_dump()["id"])


@pytest.fixture
async def services(tmp_path: Path) -> Services:
    return await directory(tmp_path)


async def test_a_korean_caller_is_asked_in_korean_with_the_events_title_and_local_time(services: Services) -> None:
    door = assemble(services)
    event_id = await made_event(door, KO, "팀 회식")
    request = await asked_about(door, KO, "delete_event", {"event_id": event_id})
    assert request.message == "'팀 회식'(3월 10일 오후 7시) 일정을 삭제할까요? 되돌릴 수 없습니다."
    assert request.locale == "ko-KR" and "evt_" not in request.message
    assert request.fields == (("일정 ID", event_id),)  # the card's rows, labelled in Korean


async def test_an_english_caller_is_asked_in_english_in_their_own_zone(services: Services) -> None:
    door = assemble(services)
    event_id = await made_event(door, EN, "Team dinner")
    request = await asked_about(door, EN, "delete_event", {"event_id": event_id})
    assert request.message == "Delete the event 'Team dinner' (Mar 10, 10 AM)? This cannot be undone."  # 19:00 KST


async def test_an_event_that_cannot_be_found_gets_a_human_sentence(services: Services) -> None:
    from toolsets.pipeline.questions import question_for

    door = assemble(services)
    tool = door.toolset("member").get("delete_event")
    assert tool is not None
    ctx = door.context_for(KO, "member")
    assert await question_for(ctx, tool, {"event_id": "evt_gone"}) == "이 일정을 삭제할까요? 되돌릴 수 없습니다."


async def test_other_languages_read_english(services: Services) -> None:
    door = assemble(services)
    french = Caller("alice", timezone="UTC", locale="fr-FR")
    event_id = await made_event(door, french, "Dîner")
    request = await asked_about(door, french, "delete_event", {"event_id": event_id})
    assert request.message.startswith("Delete the event 'Dîner' (Mar 10, 10 AM)?")


async def test_a_memory_question_shows_the_memorys_text_clipped(services: Services) -> None:
    door = assemble(services)
    text = (
        "주차는 지하 2층 B2 구역, 기둥 번호 17 옆 자리에 하면 편하다고 관리실에서 알려 주셨어요. "
        "방문증은 1층 안내데스크에서 받아요."
    )
    saved = await door.call(door.context_for(KO, "member"), "save_memory", {"content": text})
    assert isinstance(saved, ToolOk)
    memory_id = saved.data.model_dump()["id"]
    request = await asked_about(door, KO, "forget_memory", {"memory_id": memory_id})
    assert request.message.startswith("'주차는 지하 2층 B2 구역") and request.message.endswith(
        "…' 기억을 삭제할까요? 되돌릴 수 없습니다."
    )
    assert memory_id not in request.message and len(request.message) < len(text) + 30
    english = await asked_about(door, EN, "forget_memory", {"memory_id": memory_id})
    assert english.message.startswith("Forget the memory '주차는")
    assert english.message.endswith("This cannot be undone.")


async def test_a_plugin_question_shows_labelled_values() -> None:
    from types import SimpleNamespace

    from toolsets.core.annotations import ToolHints
    from toolsets.extensions.plugins.tool import PluginTool
    from toolsets.pipeline.questions import generic_question

    schema = {
        "type": "object",
        "properties": {
            "ticket_id": {"type": "string", "title": "Ticket"},
            "notify_customer": {"type": "boolean"},
            "reason": {"type": "string"},
        },
    }
    hints = ToolHints(destructive=True)
    spec = SimpleNamespace(name="archive_ticket", hints=hints, asks_client=False, input_schema=schema)
    tool = PluginTool(SimpleNamespace(tool_spec=spec))  # type: ignore[arg-type]
    shown = {"ticket_id": "T-1042", "notify_customer": False, "reason": "duplicate of T-1041"}
    assert generic_question(tool, shown, "ko-KR") == (
        "'Archive ticket'을(를) 다음 값으로 실행할까요? 되돌릴 수 없습니다.\n"
        "• Ticket: T-1042\n• Notify customer: 아니요\n• Reason: duplicate of T-1041"
    )
    english = generic_question(tool, shown, "en")
    assert english.startswith("Run 'Archive ticket' with these values?") and "(ticket_id=" not in english


async def test_a_schedule_run_reaches_the_inbox_as_a_sentence_in_the_owners_language(services: Services) -> None:
    from server.schedules.ticks import TickRunner
    from toolsets.infra.store.schedules import Schedule

    door = assemble(services)
    runner = TickRunner(services, lambda: door, lambda: None, "test")
    planned = dt.datetime(NEXT_YEAR, 3, 10, 0, 0, tzinfo=dt.UTC)  # 9 AM in Seoul
    for owner, locale in (("alice", "ko-KR"), ("bob", "en")):
        schedule = Schedule(
            id=f"sch_{owner}", owner_id=owner, timezone="Asia/Seoul", locale=locale, profile="member",
            tool="get_day_of_week", tool_ref={"kind": "builtin", "tool_name": "get_day_of_week"},
            arguments={"date": "2026-03-10"}, when="P1D", kind="interval", created_at=planned.isoformat(),
        )  # fmt: skip
        await services.schedules.create(schedule, cap=10)
        await runner.tick(schedule.id, planned.isoformat())
    (korean,) = [m.text for m in await services.inbox.messages("alice", unread_only=False, limit=5, mark_read=False)]
    (english,) = [m.text for m in await services.inbox.messages("bob", unread_only=False, limit=5, mark_read=False)]
    assert korean.startswith("예약한 작업 'Get day of week'(3월 10일 오전 9시)을(를) 실행했습니다: ")
    assert english.startswith("Ran the scheduled task 'Get day of week' (Mar 10, 9 AM): ")
    for text in (korean, english):
        assert "Tuesday" in text and "{" not in text and '"' not in text  # summarised, not raw JSON


def test_the_event_card_says_invitees_and_place_in_korean() -> None:
    from toolsets.views.app_views import EVENT, AppCatalog

    html = AppCatalog().html(EVENT)
    assert 'invitees: "초대받은 사람"' in html and 'where: "장소"' in html and "초대한 사람" not in html


def test_every_worded_message_has_its_korean() -> None:
    """Each message the code words (`tr(locale, "...")`, `trn(...)`) is in the Korean catalog, with every field."""
    import re

    from babel.messages.extract import extract_from_dir

    from toolsets.words.catalog import translations

    root = Path(__file__).resolve().parents[2]
    korean = translations("ko")
    found = 0
    for folder in ("toolsets", "bridge", "server"):
        for _file, _line, message, _comments, _context in extract_from_dir(
            root / folder, method_map=[("**.py", "python")], keywords={"tr": (2,), "trn": (2, 3)}
        ):
            ids = message if isinstance(message, tuple) else (message,)
            for text in ids:
                if not text:
                    continue
                found += 1
                said = korean.ngettext(ids[0], ids[1], 2) if len(ids) == 2 else korean.gettext(text)
                assert said != text, f"no Korean for {text!r}"
                assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", said)), text
    assert found >= 20
