"""The datetime toolset through the MCP client, in both eras."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from mcp import Client

from tests.support import MODES, error_of, server_for


@pytest.mark.anyio
@MODES
async def test_2026_03_10_is_a_tuesday(mode: str) -> None:
    async with Client(server_for(), mode=mode) as client:
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert not result.is_error
    assert result.structured_content == {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}
    assert "Tuesday" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
@MODES
async def test_day_of_week_defaults_to_today_in_the_callers_zone(mode: str) -> None:
    async with Client(server_for(timezone="Pacific/Kiritimati"), mode=mode) as client:
        before = dt.datetime.now(ZoneInfo("Pacific/Kiritimati")).date()
        result = await client.call_tool("get_day_of_week", {})
        after = dt.datetime.now(ZoneInfo("Pacific/Kiritimati")).date()
    assert result.structured_content is not None
    assert result.structured_content["date"] in {before.isoformat(), after.isoformat()}


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("bad", ["2026-13-01", "2026-02-30", "10/03/2026", "tomorrow", ""])
async def test_bad_date_is_a_validation_error_that_shows_the_format(mode: str, bad: str) -> None:
    async with Client(server_for(), mode=mode) as client:
        result = await client.call_tool("get_day_of_week", {"date": bad})
    assert result.is_error
    assert error_of(result)["code"] == "validation"
    assert "YYYY-MM-DD" in error_of(result)["reason"]


@pytest.mark.anyio
@MODES
async def test_current_datetime_in_a_named_zone_carries_its_offset(mode: str) -> None:
    async with Client(server_for(), mode=mode) as client:
        result = await client.call_tool("get_current_datetime", {"timezone": "Asia/Seoul"})
    data = result.structured_content
    assert data is not None and not result.is_error
    assert data["timezone"] == "Asia/Seoul" and data["utc_offset"] == "+09:00"
    moment = dt.datetime.fromisoformat(data["datetime"])
    assert moment.utcoffset() == dt.timedelta(hours=9)
    assert abs((moment - dt.datetime.now(dt.UTC)).total_seconds()) < 60


@pytest.mark.anyio
@MODES
async def test_current_datetime_defaults_to_the_callers_zone(mode: str) -> None:
    async with Client(server_for(timezone="America/Sao_Paulo"), mode=mode) as client:
        result = await client.call_tool("get_current_datetime", {})
    assert result.structured_content is not None
    assert result.structured_content["timezone"] == "America/Sao_Paulo"


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("bad", ["Mars/Olympus", "../../etc/passwd", "", "/etc/localtime"])
async def test_bad_timezone_says_what_a_valid_one_looks_like(mode: str, bad: str) -> None:
    async with Client(server_for(), mode=mode) as client:
        result = await client.call_tool("get_current_datetime", {"timezone": bad})
    assert error_of(result)["code"] == "validation"
    assert "Asia/Seoul" in error_of(result)["reason"]
