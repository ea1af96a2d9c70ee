"""FastMCP 4 with get_day_of_week, for bench/peers/run.py (runs in its own venv, not the project's).

    python fastmcp_server.py           stdio
    python fastmcp_server.py --http    streamable HTTP at /mcp (stateful, SSE answers) on 127.0.0.1, a free port,
                                       named on stderr: `serving http://127.0.0.1:PORT/mcp`

FastMCP's defaults otherwise, but for its start-up banner (off) and log level (WARNING, as the other servers of
the benchmark log: no per-request access log).
"""

from __future__ import annotations

import datetime as dt
import socket
import sys

from fastmcp import FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("fastmcp-peer")


class DayOfWeekResult(BaseModel):
    date: str = Field(description="The date asked about, YYYY-MM-DD")
    day_of_week: str = Field(description="English weekday name, e.g. Tuesday")
    iso_weekday: int = Field(description="ISO weekday number: 1 = Monday ... 7 = Sunday")


@mcp.tool
def get_day_of_week(date: str) -> DayOfWeekResult:
    """Return the day of the week (e.g. Tuesday) of an ISO date YYYY-MM-DD."""
    day = dt.date.fromisoformat(date.strip())
    return DayOfWeekResult(date=day.isoformat(), day_of_week=day.strftime("%A"), iso_weekday=day.isoweekday())


def serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    print(f"serving http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=port,
        path="/mcp",
        sockets=[sock],
        show_banner=False,
        log_level="WARNING",
    )


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        serve_http()
    else:
        mcp.run(transport="stdio", show_banner=False, log_level="WARNING")
