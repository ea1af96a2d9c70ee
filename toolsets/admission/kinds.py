"""The kinds of request the admission step tells apart, and what each costs the caller.

| kind | counted in `--calls-per-minute` | holds a slot of `--max-concurrent-calls` | audited here |
|---|---|---|---|
| `call` (a tool call from a front) | yes | yes | no: the call pipeline audits it |
| `nested` (a tool's own call of another tool) | yes | no: it runs inside its parent's slot | no |
| `scheduled` (a schedule's tick) | yes | yes | no |
| `task` (a task made) | yes | no: its runs hold one | no |
| `task_run` (a run of a task made earlier) | no: its making was counted | yes | no |
| `read` (`resources/read`) | yes | yes | yes |
| `prompt` (`prompts/get`) | yes | yes | yes |
| `complete` (`completion/complete`) | no: hosts send one per keystroke | yes | no |
"""

from __future__ import annotations

import enum


class RequestKind(enum.StrEnum):
    CALL = "call"
    NESTED = "nested"
    SCHEDULED = "scheduled"
    TASK = "task"
    TASK_RUN = "task_run"
    READ = "read"
    PROMPT = "prompt"
    COMPLETE = "complete"

    @property
    def counted(self) -> bool:
        return self not in _UNCOUNTED

    @property
    def holds_slot(self) -> bool:
        return self not in _SLOTLESS

    @property
    def audited(self) -> bool:
        return self in _AUDITED


_UNCOUNTED = frozenset({RequestKind.TASK_RUN, RequestKind.COMPLETE})
_SLOTLESS = frozenset({RequestKind.NESTED, RequestKind.TASK})
_AUDITED = frozenset({RequestKind.READ, RequestKind.PROMPT})
