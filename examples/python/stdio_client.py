"""truloop-mcp over stdio with the MCP Python SDK (mcp 2.3): start the server, list its tools, call two, and
answer the confirmation a destructive tool asks for.

    .venv/bin/python examples/python/stdio_client.py [--server PATH] [--data-dir DIR] [--decline]

`--server` defaults to the `truloop-mcp` beside this Python (the project's .venv); `--data-dir` to the
server's own default store. Prints what it does, one line a step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import Client, StdioServerParameters


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def main(server: str, data_dir: str | None, accept: bool) -> None:
    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        # A destructive tool (forget_memory) asks before it runs: this is where a host shows a dialog.
        print(f"asked: {params.message}")
        if not accept:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"confirm": True})

    args = ["--data-dir", data_dir] if data_dir else []
    params = StdioServerParameters(command=server, args=args)
    async with Client(params, elicitation_callback=confirm) as client:
        tools = (await client.list_tools()).tools
        print(f"tools: {len(tools)}: {', '.join(tool.name for tool in tools)}")

        day = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        print(f"get_day_of_week: {json.dumps(day.structured_content)}")

        bad = await client.call_tool("get_day_of_week", {"date": "next Tuesday"})
        print(f"get_day_of_week (a bad date): error: {text_of(bad)}")  # the model reads this and tries again

        saved = await client.call_tool("save_memory", {"content": "Prefers window seats on trains"})
        memory_id = (saved.structured_content or {})["id"]
        print(f"save_memory: {memory_id}")

        forgotten = await client.call_tool("forget_memory", {"memory_id": memory_id})
        outcome = "error: " + text_of(forgotten) if forgotten.is_error else json.dumps(forgotten.structured_content)
        print(f"forget_memory: {outcome}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=str(Path(sys.executable).parent / "truloop-mcp"))
    parser.add_argument("--data-dir")
    parser.add_argument("--decline", action="store_true", help="decline the confirmation instead of accepting it")
    options = parser.parse_args()
    asyncio.run(main(options.server, options.data_dir, accept=not options.decline))
