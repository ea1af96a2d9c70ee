"""Baseline for bench/stdio_bench.py: a bare `mcp` MCPServer with one trivial tool, served on stdio."""

from __future__ import annotations

import datetime as dt

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

mcp = MCPServer("bare", log_level="WARNING")


class DayOfWeekResult(BaseModel):
    date: str = Field(description="The date asked about, YYYY-MM-DD")
    day_of_week: str = Field(description="English weekday name, e.g. Tuesday")
    iso_weekday: int = Field(description="ISO weekday number: 1 = Monday ... 7 = Sunday")


@mcp.tool()
def get_day_of_week(date: str) -> DayOfWeekResult:
    """Return the day of the week (e.g. Tuesday) of an ISO date YYYY-MM-DD."""
    day = dt.date.fromisoformat(date.strip())
    return DayOfWeekResult(date=day.isoformat(), day_of_week=day.strftime("%A"), iso_weekday=day.isoweekday())


if __name__ == "__main__":
    mcp.run()
