"""code toolset: `execute_code`, one short Python program that calls the assistant's tools and returns only what
matters (`--code-mode`, and `--exposure code`). The deployment builds it with its `CodeMode` (engine.py)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from toolsets.core.annotations import ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.toolset import Toolset
from toolsets.extensions.codemode import CODE_TOOL
from toolsets.extensions.codemode.engine import CodeMode
from toolsets.extensions.codemode.outcome import ProgramOutcome

CODE_TOOLSET = "code"
CODE_TOOLS = frozenset({CODE_TOOL})
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120
MAX_CODE = 100_000  # characters of one program

DESCRIPTION = """Run a short Python 3 program that calls your other tools and returns only what you need: one call
instead of a chain of tool calls whose middle results you do not need to see.

Inside the program, `tools.NAME(**arguments)` calls the tool NAME with the arguments its schema names (find tools and
their schemas with search_tools) and returns its structured result (a dict). A call that is refused or fails raises
`ToolCallError` with `.code` (e.g. `precondition`, `cancelled`, `rate_limited`, `not_found`), `.reason` and
`.retryable`; catch it to act on it. Destructive tools still ask the person. Put the answer in `result` (JSON data);
print() for notes. Both come back, each at most 64 KiB. At most 50 tool calls per program, no network, no files
kept; the standard library is there.

Example:
    people = tools.search_users(query="Minji")["users"]
    events = tools.get_events(start="2026-03-09T00:00:00+09:00", end="2026-03-16T00:00:00+09:00")["events"]
    result = {"who": [p["display_name"] for p in people], "busy": [(e["title"], e["start"]) for e in events]}"""


def code_toolset(mode: CodeMode) -> Toolset:
    toolset = Toolset(CODE_TOOLSET)

    async def execute_code(
        ctx: ToolContext[Any],
        code: Annotated[
            str,
            Field(
                description="Python 3 source. Call tools as tools.NAME(**arguments); leave the answer in `result`",
                min_length=1,
                max_length=MAX_CODE,
            ),
        ],
        timeout_s: Annotated[
            float, Field(gt=0, le=MAX_TIMEOUT_S, description="Seconds before the program is stopped (at most 120)")
        ] = DEFAULT_TIMEOUT_S,
    ) -> ProgramOutcome:
        return await mode.execute(ctx, code, timeout_s)

    execute_code.__doc__ = DESCRIPTION
    # asks_user: a destructive call inside the program asks the person, so the call takes the path that can ask
    toolset.tool(hints=ToolHints(open_world=False), asks_user=True)(execute_code)
    return toolset
