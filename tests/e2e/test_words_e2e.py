"""The confirmation question end to end, in the caller's language: a real server, a client that answers the
elicitation and reads its message. Over HTTP the caller's language comes from their sign-in (the token's `locale`
claim); over stdio from `TRULOOP_LOCALE`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.support import SECRET, TRULOOP, child_env, mcp_client, spawn_http_server, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90), pytest.mark.slow]

NEXT_YEAR = dt.date.today().year + 1
EVENT = {"title": "팀 회식", "start": f"{NEXT_YEAR}-03-10T19:00:00+09:00", "end": f"{NEXT_YEAR}-03-10T21:00:00+09:00"}
KOREAN = "'팀 회식'(3월 10일 오후 7시) 일정을 삭제할까요? 되돌릴 수 없습니다."


def declining(asked: list[str]) -> Any:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    return answer


async def delete_asked(client: Client) -> None:
    made = await client.call_tool("create_event", EVENT)
    assert not made.is_error, made.content
    deleted = await client.call_tool("delete_event", {"event_id": made.structured_content["id"]})  # type: ignore[index]
    assert deleted.is_error  # declined: nothing was deleted


async def test_over_http_a_korean_sign_in_is_asked_in_korean(tmp_path: Path) -> None:
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=env) as base:
        bearer = token("alice", locale="ko-KR", zoneinfo="Asia/Seoul")
        asked: list[str] = []
        async with mcp_client(base, bearer, mode="legacy", elicitation_callback=declining(asked)) as client:
            await delete_asked(client)
        english: list[str] = []
        bearer = token("bob", zoneinfo="UTC")
        async with mcp_client(base, bearer, mode="legacy", elicitation_callback=declining(english)) as client:
            await delete_asked(client)
    assert asked == [KOREAN]
    assert english == ["Delete the event '팀 회식' (Mar 10, 10 AM)? This cannot be undone."]


async def test_over_stdio_the_servers_locale_asks_in_korean(tmp_path: Path) -> None:
    env = child_env(TRULOOP_LOCALE="ko-KR", TRULOOP_TIMEZONE="Asia/Seoul")
    params = StdioServerParameters(command=TRULOOP, args=["--data-dir", str(tmp_path / "data")], env=env)
    asked: list[str] = []
    async with Client(params, mode="legacy", elicitation_callback=declining(asked)) as client:
        await delete_asked(client)
    assert asked == [KOREAN]
