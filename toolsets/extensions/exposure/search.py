"""Ranking tools for a natural query (the tool-search pattern): BM25 over each tool's name, description,
toolset and a few Korean and English words people use for it, through the same analyzer as search.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from toolsets.core.tool import Tool
from toolsets.infra.text import analyzer

# What people call a tool when its English description does not say it (Korean first).
ALIASES: Mapping[str, str] = {
    "get_day_of_week": "요일 무슨 요일 날짜 weekday",
    "get_current_datetime": "현재 시간 지금 몇 시 오늘 날짜 시각 time now clock",
    "search_users": "사용자 사람 찾기 검색 연락처 전화번호 이메일 친구 person contact",
    "get_user_profile": "프로필 사용자 정보 내 정보 profile",
    "get_user_eids": "사용자 아이디 식별자 id lookup",
    "search_knowledge_base": "문서 지식 노션 검색 자료 찾기 문서 찾아 docs notion wiki",
    "save_memory": "기억 저장 메모 기억해 remember note",
    "search_memories": "기억 검색 메모 찾기 기억나 recall",
    "forget_memory": "기억 삭제 잊어 잊어줘 메모 지우기 지워 지워줘 forget delete",
    "search_places": "장소 맛집 식당 카페 근처 지도 위치 place restaurant map",
    "send_message_to_user": "메시지 보내기 알림 전달 연락 문자 message notify",
    "get_inbox": "받은 메시지 수신함 알림 확인 inbox",
    "create_event": "일정 만들기 약속 잡기 잡아 잡아줘 이벤트 생성 모임 schedule meeting",
    "get_events": "일정 목록 내 일정 약속 보기 이벤트 schedule list",
    "get_event_details": "초대받은 일정 상세 이벤트 정보 자세히 details",
    "update_event": "일정 수정 변경 약속 바꾸기 이벤트 change edit",
    "delete_event": "일정 삭제 취소 약속 취소 이벤트 cancel remove",
    "invite_to_event": "초대 일정 초대하기 참석자 추가 invite guests",
    "get_calendar_events": "캘린더 달력 휴대폰 일정 기기 calendar phone",
    "confirm_interaction": "확인 동의 대화상자 물어보기 confirm dialog ask",
    "get_permission_status": "권한 허용 상태 위치 권한 permission",
    "list_invited_events": "초대받은 일정 초대 목록 invitations",
    "update_guest_availability": "가능한 날짜 참석 가능 응답 availability dates",
}


@dataclass(frozen=True)
class ToolMatch:
    tool: Tool
    score: float


def _document(tool: Tool) -> str:
    return " ".join((tool.name.replace("_", " "), tool.toolset, tool.description, ALIASES.get(tool.name, "")))


@lru_cache(maxsize=64)  # keyed by the tools' text alone: no `Tool` of any deployment is kept
def _index(documents: tuple[str, ...]) -> tuple[list[Counter[str]], dict[str, int], float]:
    terms = analyzer()
    docs = [Counter(terms.terms(document)) for document in documents]
    frequency: Counter[str] = Counter()
    for doc in docs:
        frequency.update(doc.keys())
    average = sum(sum(doc.values()) for doc in docs) / max(len(docs), 1)
    return docs, dict(frequency), average


def search(tools: Iterable[Tool], query: str, limit: int = 5) -> list[ToolMatch]:
    """The best matches first; tools sharing no term with the query are left out."""
    ordered = tuple(sorted(tools, key=lambda tool: tool.name))
    docs, frequency, average = _index(tuple(_document(tool) for tool in ordered))
    wanted = set(analyzer().query_terms(query))
    count = len(ordered)
    scored = []
    for tool, doc in zip(ordered, docs, strict=True):
        length = sum(doc.values())
        score = 0.0
        for term in wanted & doc.keys():
            idf = math.log(1 + (count - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = doc[term]
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        if score > 0:
            scored.append(ToolMatch(tool, score))
    scored.sort(key=lambda match: (-match.score, match.tool.name))
    return scored[:limit]
