"""Rehearsal: a written version runs fixed cases in the sandbox before it meets a live call.

The cases of a file are its `TOOL_CASES`, a literal list read from its source without running it:
`[{"input": {...}, "expect": {...}}, ...]` (at most `MAX_CASES`). `input` is the tool's arguments (checked against
its `input_schema`); `expect`, when given, is a part of the result: every key it names must be in the result with an
equal value; left out, the call need only succeed. A file that declares none is rehearsed on the cases of the
version it replaces. Either way the inputs of the tool's latest feedback (failed calls, and the samples of a hold or a
rollback) are added, each of which must now succeed, so a fix is checked against what broke; a feedback input that
no longer fits the schema is skipped. The first case that fails is the reason, word for word. All the cases of one
version have `REHEARSAL_SECONDS` together.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.core.call import envelope_of
from toolsets.core.envelope import ToolErr
from toolsets.core.errors import ToolInputError

if TYPE_CHECKING:
    from toolsets.core.context import ToolContext
    from toolsets.extensions.plugins.version import PluginVersion

MAX_CASES = 20
REHEARSAL_SECONDS = 120.0  # every case of one version together (each call also has its own timeout_s)
SHOWN_CHARS = 300
CASE_KEYS = frozenset({"input", "expect"})


class CasesError(ValueError):
    """`TOOL_CASES` is there but is not a list of cases (the reason, for the model)."""


@dataclass(frozen=True, slots=True)
class Case:
    input: dict[str, Any]
    expect: dict[str, Any] | None
    origin: str  # TOOL_CASES[0], "version X's TOOL_CASES[0]", or the feedback it came from
    strict: bool = True  # a declared case must fit the schema; a feedback input that no longer does is skipped


def declared_cases(text: str, label: str = "TOOL_CASES") -> list[Case] | None:
    """The file's `TOOL_CASES` (None: it declares none), read as a literal: nothing in the file runs here."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the check says what is wrong with the file
    found: ast.expr | None = None
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(target, ast.Name) and target.id == "TOOL_CASES" for target in targets):
            found = getattr(node, "value", None)
    if found is None:
        return None
    try:
        value = ast.literal_eval(found)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise CasesError("TOOL_CASES must be a literal list of cases (dicts, lists, strings, numbers)") from None
    if not isinstance(value, list):
        raise CasesError("TOOL_CASES must be a list of {'input': {...}, 'expect': {...}}")
    if len(value) > MAX_CASES:
        raise CasesError(f"TOOL_CASES has {len(value)} cases; at most {MAX_CASES}")
    cases: list[Case] = []
    for index, case in enumerate(value):
        where = f"{label}[{index}]"
        if not isinstance(case, dict) or not isinstance(case.get("input"), dict) or set(case) - CASE_KEYS:
            raise CasesError(f"{where} must be {{'input': {{...}}, 'expect': {{...}}}} (expect optional)")
        expect = case.get("expect")
        if expect is not None and not isinstance(expect, dict):
            raise CasesError(f"{where}['expect'] must be a dict: the keys the result must have, with their values")
        cases.append(Case(case["input"], expect, where))
    return cases


async def rehearse(version: PluginVersion, cases: list[Case], ctx: ToolContext[Any]) -> str | None:
    """Run every case on `version` (started here: `create` then each call, in its sandboxed worker), as the
    author; the first failure's reason, or None when every case matched."""
    with anyio.move_on_after(REHEARSAL_SECONDS):
        return await _rehearse(version, cases, ctx)
    return f"rehearsal did not finish within {REHEARSAL_SECONDS:g} s ({len(cases)} cases)"


async def _rehearse(version: PluginVersion, cases: list[Case], ctx: ToolContext[Any]) -> str | None:
    tool = version.tool
    total = len(cases)
    try:
        await version.start()
    except Exception as exc:
        return f"rehearsal could not start the tool: create(context) failed ({type(exc).__name__}: {exc})"
    for number, case in enumerate(cases, 1):
        shown = _shown(case.input)
        try:
            arguments = tool.parse_arguments(case.input)
        except ToolInputError as exc:
            if not case.strict:
                continue
            problem = f"its input {shown} does not fit input_schema: {exc}"
            return f"rehearsal case {number} of {total} ({case.origin}): {problem}"
        try:
            result = await tool.run(ctx, arguments, version, "stable")
        except Exception as exc:
            envelope = envelope_of(tool.name, exc)
            what = f"{envelope.code.value}: {envelope.reason}" if isinstance(envelope, ToolErr) else type(exc).__name__
            return f"rehearsal case {number} of {total} ({case.origin}) failed: input {shown} -> {what}"
        mismatch = _mismatch(case.expect, getattr(result, "root", None))
        if mismatch is not None:
            return f"rehearsal case {number} of {total} ({case.origin}) failed: input {shown} -> {mismatch}"
    return None


def _mismatch(expect: dict[str, Any] | None, value: Any) -> str | None:
    if not expect:
        return None
    if not isinstance(value, dict):
        return "expected an object result"
    for key, wanted in expect.items():
        if key not in value:
            return f"the result has no {key!r} (expected {_shown(wanted)})"
        if value[key] != wanted:
            return f"expected {key!r} = {_shown(wanted)}, got {_shown(value[key])}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
