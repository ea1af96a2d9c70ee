"""Gate declarations: the built-in read-before-write gates and a TOML file (`--gates FILE`).

builtin = true            # keep the built-in gates (default); false turns them off

[[gate]]
kind = "requires"         # TOOL runs only after one of AFTER succeeded in this conversation
tool = "send_message_to_user"
after = ["search_users"]

[[gate]]
kind = "same_value"       # ... and ARGUMENT's value appeared in one of those calls
tool = "update_event"
argument = "event_id"
after = ["get_events", "get_event_details", "create_event"]

[[gate]]
kind = "first"            # TOOL before any other tool of the conversation
tool = "get_current_datetime"
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from toolsets.core.problems import problems

# Tools that manage the tool list itself; no gate applies to them.
EXEMPT = frozenset({"list_toolsets", "load_toolset", "search_tools"})


class _Gate(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    tool: str = Field(min_length=1)


class RequiresGate(_Gate):
    kind: Literal["requires"]
    after: tuple[str, ...] = Field(min_length=1)


class SameValueGate(_Gate):
    kind: Literal["same_value"]
    argument: str = Field(min_length=1)
    after: tuple[str, ...] = Field(min_length=1)


class FirstGate(_Gate):
    kind: Literal["first"]


Gate = Annotated[RequiresGate | SameValueGate | FirstGate, Field(discriminator="kind")]
_GATE = TypeAdapter(Gate)

READS_OF_EVENTS = ("get_events", "get_event_details", "create_event")
BUILTIN_GATES: tuple[RequiresGate | SameValueGate | FirstGate, ...] = tuple(
    SameValueGate(kind="same_value", tool=tool, argument="event_id", after=READS_OF_EVENTS)
    for tool in ("update_event", "delete_event", "invite_to_event")
)


@dataclass(frozen=True)
class GateSet:
    """The gates of a deployment, by the tool they guard."""

    gates: tuple[RequiresGate | SameValueGate | FirstGate, ...] = ()
    by_tool: Mapping[str, tuple[RequiresGate | SameValueGate, ...]] = field(init=False)
    first: str | None = field(init=False)
    remembered: frozenset[str] = field(init=False)  # tools whose successes a gate reads
    value_tools: frozenset[str] = field(init=False)  # ... and whose values a `same_value` gate reads

    def __post_init__(self) -> None:
        by_tool: dict[str, list[RequiresGate | SameValueGate]] = {}
        first = None
        remembered: set[str] = set()
        for gate in self.gates:
            if isinstance(gate, FirstGate):
                first = gate.tool
                remembered.add(gate.tool)
            else:
                by_tool.setdefault(gate.tool, []).append(gate)
                remembered.update(gate.after)
        object.__setattr__(self, "by_tool", {tool: tuple(found) for tool, found in by_tool.items()})
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "remembered", frozenset(remembered))
        values = {t for gate in self.gates if isinstance(gate, SameValueGate) for t in gate.after}
        object.__setattr__(self, "value_tools", frozenset(values))

    def __bool__(self) -> bool:
        return bool(self.gates)

    def refusing_alone(self, tool: str) -> str | None:
        """The gate that refuses `tool` in a conversation where nothing ran before it (a scheduled run's), in words;
        None when no gate would."""
        if tool in EXEMPT:
            return None
        if self.first and tool != self.first:
            return f"the 'first' gate: {self.first} must succeed before any other tool in the same conversation"
        for gate in self.by_tool.get(tool, ()):
            after = " or ".join(gate.after)
            if isinstance(gate, SameValueGate):
                return (
                    f"the read-before-write gate of {tool}: its {gate.argument} must first appear in a result of "
                    f"{after} in the same conversation"
                )
            return f"the gate of {tool}: {after} must succeed first in the same conversation"
        return None


class GateFileError(ValueError):
    """A gates file that cannot be used: `path:line: problem`."""


def load_gates(path: Path | None, known_tools: Mapping[str, Iterable[str]]) -> GateSet:
    """The built-in gates plus those of `path`; `known_tools` maps each tool name to its argument names."""
    if path is None:
        return _checked(BUILTIN_GATES, known_tools, lambda index, key: "built-in gates")
    import tomllib  # only a gates file needs it

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GateFileError(f"{path}: cannot read the gates file ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GateFileError(f"{path}: not valid TOML ({exc})") from None

    def where(index: int | None, key: str | None) -> str:
        return f"{path}:{_line_of(text, index, key)}"

    unknown = sorted(set(data) - {"builtin", "gate"})
    if unknown:
        raise GateFileError(f"{where(None, unknown[0])}: unknown key {unknown[0]!r}; use 'builtin' and [[gate]] tables")
    builtin = data.get("builtin", True)
    if not isinstance(builtin, bool):
        raise GateFileError(f"{where(None, 'builtin')}: builtin must be true or false")
    raw = data.get("gate", [])
    if not isinstance(raw, list):
        raise GateFileError(f"{where(None, 'gate')}: gates are [[gate]] tables")
    gates: list[Any] = list(BUILTIN_GATES) if builtin else []
    for index, entry in enumerate(raw):
        try:
            gates.append(_GATE.validate_python(entry))
        except ValidationError as exc:
            field_name, message = problems(exc, whole="gate", limit=1)[0]
            raise GateFileError(
                f"{where(index, _first_key(field_name))}: gate {index + 1}: {field_name}: {message}"
            ) from None
    shift = len(BUILTIN_GATES) if builtin else 0
    return _checked(tuple(gates), known_tools, lambda index, key: where(index - shift, key))


def _first_key(field_name: str) -> str | None:
    parts = [part for part in field_name.split(".") if part not in ("gate", "requires", "same_value", "first")]
    return parts[0] if parts and not parts[0].isdigit() else None


def _checked(gates: tuple[Any, ...], known_tools: Mapping[str, Iterable[str]], where: Any) -> GateSet:
    firsts = [index for index, gate in enumerate(gates) if isinstance(gate, FirstGate)]
    if len(firsts) > 1:
        raise GateFileError(f"{where(firsts[1], 'kind')}: only one 'first' gate can hold")
    for index, gate in enumerate(gates):
        for name, key in [(gate.tool, "tool"), *((t, "after") for t in getattr(gate, "after", ()))]:
            if name not in known_tools:
                raise GateFileError(f"{where(index, key)}: unknown tool {name!r}")
        if isinstance(gate, SameValueGate) and gate.argument not in set(known_tools[gate.tool]):
            raise GateFileError(f"{where(index, 'argument')}: {gate.tool} has no argument {gate.argument!r}")
        if gate.tool in EXEMPT:
            raise GateFileError(f"{where(index, 'tool')}: {gate.tool} manages the tool list and cannot be gated")
    cycle = _cycle(gates)
    if cycle:
        index = next(i for i, g in enumerate(gates) if g.tool == cycle[0] and not isinstance(g, FirstGate))
        raise GateFileError(f"{where(index, 'after')}: a cycle: {' -> '.join(cycle)} (no tool of it could ever run)")
    return GateSet(gates)


def _cycle(gates: tuple[Any, ...]) -> list[str] | None:
    edges: dict[str, set[str]] = {}
    for gate in gates:
        if not isinstance(gate, FirstGate):
            edges.setdefault(gate.tool, set()).update(gate.after)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def _line_of(text: str, index: int | None, key: str | None) -> int:
    """The line of the `index`-th [[gate]] table (or the top level), at `key` when it is there."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if index is not None:
        headers = [n for n, line in enumerate(lines) if re.match(r"\s*\[\[\s*gate\s*\]\]", line)]
        if index < len(headers):
            start = headers[index]
            end = next((n for n in headers if n > start), len(lines))
    if key:
        for n in range(start, end):
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[n]):
                return n + 1
    return start + 1
