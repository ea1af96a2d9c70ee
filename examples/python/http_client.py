"""truloop-mcp over streamable HTTP with the MCP Python SDK (mcp 2.3): connect with a bearer token, list the
tools, call one, and read who the server thinks you are.

    .venv/bin/truloop-mcp --transport http            # serves http://127.0.0.1:8000/mcp
    .venv/bin/python examples/python/http_client.py [--url URL] [--token TOKEN]

The token (`--token`, else the environment's TRULOOP_TOKEN) is needed when the server has TRULOOP_JWT_SECRET:
mint one with `truloop-mcp token --user alice` (same secret). Without a secret the server serves everyone as
its `--user` and the token may be left out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

import httpx2  # the MCP SDK's HTTP client (a fork of httpx): headers and timeouts go on it
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str | None) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30.0) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        tools = (await client.list_tools()).tools
        print(f"tools: {len(tools)}: {', '.join(tool.name for tool in tools)}")

        day = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        print(f"get_day_of_week: {json.dumps(day.structured_content)}")

        me = await client.call_tool("get_user_profile", {})
        print(f"get_user_profile: {json.dumps(me.structured_content, ensure_ascii=False)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000/mcp")
    parser.add_argument("--token", default=os.environ.get("TRULOOP_TOKEN"))
    options = parser.parse_args()
    try:
        asyncio.run(main(options.url, options.token))
    except Exception as exc:  # the client's task group raises an ExceptionGroup: show its first leaf
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        hint = "" if options.token else " (no token given: set TRULOOP_TOKEN, see `truloop-mcp token --user ID`)"
        sys.exit(f"http_client: {options.url}: {type(leaf).__name__}: {leaf}{hint}")
