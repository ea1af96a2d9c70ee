"""Handshake-era conversations: an MCP session of 2025-06-18 or 2025-11-25 is its own conversation.

Its tool list may change while it runs (`--exposure progressive`, gates that open), and it is told with
`notifications/tools/list_changed`; what it did lives as long as its connection (one per stdio process,
one per HTTP session id). 2026-07-28 requests have no session: their conversation is the caller's, which
the front door keeps (in Redis when configured). What a conversation sees and may call is decided in
toolsets/extensions/exposure/policy.py, the same for every front.
"""

from __future__ import annotations

import weakref
from typing import Any

from server.sdk_compat import connection_of
from toolsets.core.conversation import ConversationState, MemoryConversation


class SessionConversations:
    """One conversation per live connection, forgotten with it."""

    def __init__(self) -> None:
        self._states: weakref.WeakKeyDictionary[Any, ConversationState] = weakref.WeakKeyDictionary()

    def get(self, session: Any) -> MemoryConversation:
        connection = connection_of(session) or session
        state = self._states.get(connection)
        if state is None:
            state = self._states[connection] = ConversationState()
        return MemoryConversation(state)
