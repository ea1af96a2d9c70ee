"""Which gate refuses a call made in a conversation where nothing ran before it (a scheduled run's): what
`schedule_tool_run` names when it refuses to schedule such a call."""

from __future__ import annotations

from toolsets.pipeline.gates import BUILTIN_GATES, GateSet
from toolsets.pipeline.gates.spec import FirstGate, RequiresGate


def test_the_builtin_read_before_write_gates_refuse_a_lone_call() -> None:
    gates = GateSet(BUILTIN_GATES)
    said = gates.refusing_alone("delete_event")
    assert said is not None and "read-before-write gate of delete_event" in said and "get_events" in said
    assert gates.refusing_alone("get_events") is None
    assert gates.refusing_alone("forget_memory") is None


def test_requires_and_first_gates_refuse_a_lone_call_but_never_the_tool_list_tools() -> None:
    gates = GateSet(
        (
            RequiresGate(kind="requires", tool="send_message_to_user", after=("search_users",)),
            FirstGate(kind="first", tool="get_current_datetime"),
        )
    )
    assert "'first' gate" in (gates.refusing_alone("get_events") or "")
    assert gates.refusing_alone("get_current_datetime") is None
    assert gates.refusing_alone("search_tools") is None
    assert GateSet(gates.gates[:1]).refusing_alone("send_message_to_user") == (
        "the gate of send_message_to_user: search_users must succeed first in the same conversation"
    )
    assert GateSet().refusing_alone("delete_event") is None
