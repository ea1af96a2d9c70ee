"""`truloop://guide`: what the caller's tools do, in Korean and English, and what else the server offers."""

from __future__ import annotations

from collections.abc import Sequence

from toolsets.views.scope import ViewScope

# toolset -> (Korean, English): what each of the assistant's toolsets is for
TOOLSETS: dict[str, tuple[str, str]] = {
    "datetime": ("날짜와 요일, 현재 시각을 알려 줍니다.", "Dates, weekdays and the current time."),
    "user": ("연락처·이름·그룹으로 사람을 찾고 프로필을 봅니다.", "Find people by contact, name or group."),
    "knowledge": ("팀 문서(지식 베이스)를 검색합니다.", "Search the team's documents (the knowledge base)."),
    "memory": ("기억할 내용을 저장하고 찾고 지웁니다.", "Save, search and forget things to remember."),
    "places": ("장소를 검색합니다.", "Search for places."),
    "relay": ("다른 사용자에게 메시지를 보내고 받은 메시지를 읽습니다.", "Message other users and read your inbox."),
    "event": ("일정을 만들고 고치고 초대하고 지웁니다.", "Create, change, invite to and delete events."),
    "interaction": ("사용자에게 확인을 받습니다.", "Ask the user to confirm something."),
    "permission": ("기기 권한 상태를 확인합니다.", "Check a device permission."),
    "guest": ("초대받은 일정을 보고 가능한 날짜를 알립니다.", "See your invitations and send the dates you can make."),
}


def guide_text(scope: ViewScope, notes: Sequence[str] = ()) -> str:
    """The guide for `scope`: the toolsets, the caller's own tools with their (English) descriptions, the rest;
    `notes` (what the server said at start, e.g. that `--demo` added nothing) first, where a host shows them."""
    lines = [
        "# truloop 안내 / truloop guide",
        "",
        "이 서버는 truloop 비서의 도구를 제공합니다. 날짜는 ISO 8601(YYYY-MM-DD), 시각에는 UTC 오프셋을 씁니다.",
        "This server publishes the truloop assistant's tools. Dates are ISO 8601 (YYYY-MM-DD); times carry offsets.",
        "",
    ]
    if notes:
        lines += ["## 알림 / Notes", ""]
        for note in notes:
            lines += [f"- {line}" for line in note.splitlines()]
        lines.append("")
    lines += [
        "## 도구 모음 / Toolsets",
        "",
    ]
    for name, (korean, english) in TOOLSETS.items():
        lines.append(f"- **{name}**: {korean} / {english}")
    lines += ["", "## 내 도구 / Your tools", ""]
    for tool in sorted(scope.tools):
        about = scope.tools.get(tool, "").strip().split("\n", 1)[0]
        lines.append(f"- `{tool}`" + (f": {about}" if about else ""))
    lines += ["", "## 리소스 / Resources", ""]
    lines.append("- `truloop://guide`: 이 안내 / this guide")
    if scope.inbox:
        lines.append("- `truloop://inbox`: 받은 메시지(읽어도 읽음 표시되지 않음) / your inbox (reading marks nothing)")
    if scope.events:
        lines.append("- `truloop://events`, `truloop://events/{event_id}`: 다가오는 일정 / your upcoming events")
    if scope.docs:
        lines.append("- `truloop://docs/{path}`: 지식 베이스 문서 / a document of the knowledge base")
    lines += [
        "",
        "## 프롬프트 / Prompts",
        "",
        "호스트의 명령 목록(예: `/`)에서 고릅니다: 회의 잡기, 받은 메시지 요약, 문서 찾기, 기억하기, 일정 준비.",
        "Hosts list them as commands (e.g. `/`): plan a meeting, summarise my inbox, find in our docs, "
        "remember this, prepare for an event.",
        "",
    ]
    return "\n".join(lines)
