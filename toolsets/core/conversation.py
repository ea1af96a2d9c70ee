"""What one conversation has done so far: the tools that succeeded, the values the model has seen,
the toolsets it loaded. Gates and progressive exposure read it.

A conversation is an MCP session on the handshake era, and on 2026-07-28 (no sessions) the caller
with a sliding TTL (`CONVERSATION_TTL_S`). Stores: `MemoryConversations` here; a shared one in
Redis lives in the bridge, so replicas agree.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

CONVERSATION_TTL_S = 30 * 60
MAX_SEEN_VALUES = 2_000  # per conversation; the oldest are forgotten first


class Conversation(Protocol):
    async def succeeded(self, tools: Iterable[str]) -> bool:
        """Has any of these tools succeeded in this conversation?"""
        ...

    async def has_seen(self, tools: Iterable[str], value: str) -> bool:
        """Has `value` appeared in the arguments or result of a successful call of one of these tools?"""
        ...

    async def record(self, tool: str, values: Iterable[str]) -> None:
        """A successful call of `tool`, with the values worth remembering from it (may be empty)."""
        ...

    async def loaded(self) -> frozenset[str]: ...

    async def load(self, toolset: str) -> None: ...


class Conversations(Protocol):
    """Conversations by key (in memory, or in Redis so replicas agree)."""

    def get(self, key: str) -> Conversation: ...


@dataclass(slots=True)
class ConversationState:
    succeeded: set[str] = field(default_factory=set)
    seen: dict[str, dict[str, None]] = field(default_factory=dict)  # tool -> values, oldest first
    loaded: set[str] = field(default_factory=set)
    touched: float = field(default_factory=time.monotonic)


class MemoryConversation:
    """A conversation held in this process."""

    def __init__(self, state: ConversationState) -> None:
        self._state = state

    async def succeeded(self, tools: Iterable[str]) -> bool:
        return any(tool in self._state.succeeded for tool in tools)

    async def has_seen(self, tools: Iterable[str], value: str) -> bool:
        return any(value in self._state.seen.get(tool, ()) for tool in tools)

    async def record(self, tool: str, values: Iterable[str]) -> None:
        state = self._state
        state.succeeded.add(tool)
        seen = state.seen.setdefault(tool, {})
        for value in values:
            seen.pop(value, None)
            seen[value] = None
        total = sum(len(values) for values in state.seen.values())
        while total > MAX_SEEN_VALUES:
            largest = max(state.seen.values(), key=len)
            del largest[next(iter(largest))]
            total -= 1

    async def loaded(self) -> frozenset[str]:
        return frozenset(self._state.loaded)

    async def load(self, toolset: str) -> None:
        self._state.loaded.add(toolset)


class MemoryConversations:
    """Conversations by key with a sliding TTL, at most `capacity` of them (the stalest go first)."""

    def __init__(self, *, ttl: float = CONVERSATION_TTL_S, capacity: int = 10_000) -> None:
        self._ttl = ttl
        self._capacity = capacity
        self._states: dict[str, ConversationState] = {}

    def get(self, key: str) -> MemoryConversation:
        now = time.monotonic()
        state = self._states.pop(key, None)
        if state is None or now - state.touched > self._ttl:
            state = ConversationState()
        state.touched = now
        self._states[key] = state  # most recent last
        if len(self._states) > self._capacity:
            del self._states[next(iter(self._states))]
        return MemoryConversation(state)
