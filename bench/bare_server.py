"""Baseline for bench/stdio_bench.py: a bare `mcp` MCPServer with one trivial tool, served on stdio.

`--transport truloop` serves the same server on truloop-mcp's checked stdio transport (server/stdio/sdk_transport.py:
the SDK's `stdio_server` fed only lines that passed the line check), to measure what the checks alone change.

`--http` (for bench/http_bench.py) serves it as streamable HTTP at /mcp the way the SDK's
`run_streamable_http_async` does (uvicorn's defaults on anyio's default loop), on a free loopback
port it names on stderr (`serving http://127.0.0.1:PORT/mcp`); `--http --json` answers POSTs with
plain JSON instead of an SSE stream, which shows what the SSE framing costs.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

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


async def serve_on_our_transport() -> None:
    from server.stdio.sdk_transport import serve_stdio, stdio_channel

    async with stdio_channel() as channel:
        await serve_stdio(mcp, channel)


async def serve_http(json_response: bool) -> None:
    import socket

    import uvicorn

    app = mcp.streamable_http_app(streamable_http_path="/mcp", json_response=json_response, host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(f"serving http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    import anyio

    if sys.argv[1:] == ["--transport", "truloop"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project's server package
        anyio.run(serve_on_our_transport)
    elif sys.argv[1:2] == ["--http"]:
        anyio.run(serve_http, "--json" in sys.argv)
    else:
        mcp.run()
