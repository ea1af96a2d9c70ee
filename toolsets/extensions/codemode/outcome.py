"""What `execute_code` answers: the program's result and printed output, each bounded with a note when clipped, or
the error it stopped with (its traceback, and what it printed before)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.codemode.program import ProgramAnswer

SHOWN_IN_ERROR = 8 * 1024  # characters of printed output an error repeats (its end)


class ProgramOutcome(BaseModel):
    result: Any = Field(
        default=None,
        description="The value the program left in `result` (JSON); past the bound, the start of its JSON text",
    )
    output: str = Field(description="What the program printed (stdout and stderr), bounded")
    calls: int = Field(description="Tool calls the program made")
    notes: list[str] = Field(default_factory=list, description="What was clipped, if anything")
    program: str = Field(description="The program's id, as its calls' audit lines name it")


def outcome_of(answer: ProgramAnswer, calls: int, cap: int, program: str) -> ProgramOutcome:
    notes = []
    output = answer.output
    if answer.output_bytes > cap:
        notes.append(f"output clipped: the program printed {answer.output_bytes:,} bytes; the first {cap:,} are kept")
        output += "\n[... output clipped ...]"
    if answer.result_json_bytes > cap:
        notes.append(
            f"result clipped: its JSON is {answer.result_json_bytes:,} bytes; `result` holds its first {cap:,} bytes "
            "as text. Return less (a summary, the fields you need)"
        )
    return ProgramOutcome(result=answer.result, output=output, calls=calls, notes=notes, program=program)


def failure(answer: ProgramAnswer, calls: int, program: str) -> ToolError:
    """The program raised (or exited with a code): its error, where, and what it printed, for the model to fix."""
    error = answer.error or {}
    kind = str(error.get("type") or "Exception")[:100]
    trace = str(error.get("trace") or "").strip()
    printed = answer.output[-SHOWN_IN_ERROR:]
    text = f"The program raised {kind}: {str(error.get('message') or '')[:2000]}"
    if trace:
        text += f"\n{trace}"
    if printed:
        text += f"\nIt printed before it stopped:\n{printed}"
    text += f"\n({calls} tool calls made; program {program})"
    detail = {"exception": kind, "calls": calls, "program": program}
    if error.get("code") is not None:
        detail["tool_error_code"] = str(error["code"])
    return ToolError(text, code=ErrorCode.TOOL_ERROR, detail=detail)
