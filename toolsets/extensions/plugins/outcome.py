"""What those who follow plugin calls hear of each (toolsets/pipeline/feedback_middleware.py: the feedback recorder
and the authoring trials): the tool, the version that ran, how the call was routed, its (validated) arguments, its
envelope, who called, and whether that version serves on trial."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolsets.core.call_notes import Route
    from toolsets.core.envelope import ToolResult


@dataclass(frozen=True, slots=True)
class PluginOutcome:
    name: str
    version: str
    route: Route
    arguments: BaseModel  # validated; dumped only by a listener that keeps them
    outcome: ToolResult
    user_id: str | None = None  # the caller: feedback shows a call's arguments to that user only
    trial: bool = False  # the version serves on trial (authoring): a failure's route is `trial`
