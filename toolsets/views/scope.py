"""Whose view it is: the caller, and the tools of the profile they get (a view follows the tools: a guest, who has
only the guest tools, sees only their invitations; the notification-safe profile has no inbox or events)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from toolsets.core.context import Caller

KNOWLEDGE_TOOL = "search_knowledge_base"
INBOX_TOOL = "get_inbox"
EVENTS_TOOL = "get_events"
INVITED_TOOL = "list_invited_events"
PEOPLE_TOOL = "search_users"
SCHEDULES_TOOL = "list_schedules"


@dataclass(frozen=True, slots=True)
class ViewScope:
    caller: Caller
    profile: str
    tools: Mapping[str, str]  # name -> the tool's description

    @property
    def user_id(self) -> str:
        return self.caller.user_id

    @property
    def docs(self) -> bool:
        return KNOWLEDGE_TOOL in self.tools

    @property
    def inbox(self) -> bool:
        return INBOX_TOOL in self.tools

    @property
    def events(self) -> bool:
        """Owned and invited events (members), or invitations only (guests)."""
        return EVENTS_TOOL in self.tools or INVITED_TOOL in self.tools

    @property
    def invitations_only(self) -> bool:
        return EVENTS_TOOL not in self.tools

    @property
    def schedules(self) -> bool:
        return SCHEDULES_TOOL in self.tools

    @property
    def people(self) -> bool:
        return PEOPLE_TOOL in self.tools
