"""What the authoring tools return (the model reads these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

FileState = Literal["serving", "trial", "candidate", "pending", "disabled", "failed"]


class AuthoringResult(BaseModel):
    name: str = Field(description="The tool's name")
    file: str | None = Field(default=None, description="The file written, moved or removed, in the tools folder")
    version: str | None = Field(default=None, description="The file's version (the start of its SHA-256)")
    state: str = Field(
        description="trial (new, serving, its first calls must succeed), pending (new, not serving: see error), "
        "candidate (a canary of a served tool), refused, failed, deleted or reloaded"
    )
    error: str | None = Field(default=None, description="Why it does not serve, word for word (fix and write again)")
    message: str | None = Field(default=None, description="What happens next")


class LoadedTool(BaseModel):
    name: str = Field(description="The tool's name, as the model calls it")
    file: str = Field(description="The file it was loaded from")
    version: str = Field(description="The file's version")
    description: str = Field(description="What it does (its TOOL_SPEC description)")
    candidate: bool = Field(description="True for a canary candidate (NAME.canary.py), which serves a share of calls")


class LoadErrorInfo(BaseModel):
    file: str = Field(description="The file that did not load")
    version: str | None = Field(description="The version that failed")
    error: str = Field(description="Why, word for word")


class ToolListing(BaseModel):
    tools_dir: str = Field(description="The tools folder")
    files: list[str] = Field(description="Its files: NAME.py, NAME.canary.py, NAME.py.pending, *.disabled")
    loaded: list[LoadedTool] = Field(description="The tools loaded from them")
    errors: list[LoadErrorInfo] = Field(description="The files that did not load, and why")


class FileStatus(BaseModel):
    file: str = Field(description="The file, in the tools folder")
    name: str | None = Field(default=None, description="The tool it declares")
    version: str | None = Field(default=None, description="The file's version (the start of its SHA-256)")
    state: FileState = Field(
        description="serving, trial (a new tool's first calls), candidate (canary), pending (new, not serving), "
        "disabled (rolled back) or failed (does not load)"
    )
    detail: str | None = Field(default=None, description="The trial's or the rollout's progress")
    error: str | None = Field(default=None, description="Its load error or why it is pending, word for word")
    cause: str | None = Field(
        default=None,
        description="Why the canary held or rolled it back: the rule, and both windows' numbers (get_tool_feedback "
        "has the failing inputs)",
    )


class RegistryStatus(BaseModel):
    files: list[FileStatus] = Field(description="One entry per file of the tools folder")


class ReloadResult(BaseModel):
    served: list[str] = Field(description="The custom tools served after the reload")
    checked: list[AuthoringResult] = Field(description="The pending files checked again, and what became of them")
    errors: list[LoadErrorInfo] = Field(description="The files that did not load, and why")


class FeedbackItem(BaseModel):
    kind: str = Field(description="call (a failed or timed-out call), hold or rollback (a canary decision)")
    version: str = Field(description="The tool version it is about (a rollout's candidate)")
    route: str = Field(description="stable, canary, trial or scheduled")
    at: str = Field(description="When, ISO 8601 UTC")
    arguments: dict[str, Any] | None = Field(
        default=None,
        description="A call's arguments: your own call's masked like the audit log; another user's by shape only "
        '(per argument its type and length, e.g. {"type": "string", "length": 23})',
    )
    code: str | None = Field(default=None, description="A call's error code")
    message: str = Field(description="The error the call returned, or the decision's reason")
    rule: str | None = Field(default=None, description="The canary rule that held or rolled back")
    windows: dict[str, Any] | None = Field(
        default=None, description="candidate / stable: both windows' numbers when the canary decided"
    )
    samples: list[dict[str, Any]] = Field(
        default_factory=list, description="Failing inputs of the candidate (another user's by shape only)"
    )


class ToolFeedback(BaseModel):
    name: str = Field(description="The tool")
    kept: int = Field(description="How many entries are kept per tool (older ones are dropped)")
    entries: list[FeedbackItem] = Field(description="Newest first")
