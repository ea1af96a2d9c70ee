"""`TOOL_SPEC`, checked when a version is loaded: a version whose spec is invalid is never published.

TOOL_SPEC = {
    "name": "echo_text",                     # required; letters, digits, _ . - (at most 64)
    "description": "What it does, for the model.",            # required
    "input_schema": {"type": "object", "properties": {...}},  # required; a JSON Schema of an object
    "output_schema": {"type": "object", ...},  # optional: results must match it (structured output)
    "annotations": {"readOnlyHint": True},   # optional MCP hints; the ones left out are false
    "version": "1.2.0",                      # optional label; the version that counts is the content hash
    "profiles": ["member"],                  # optional: member, notification-safe, guest (default member)
    "timeout_s": 30,                         # optional: seconds a call may take (default 30, at most 600)
    "returns": "structured",                 # optional: "content" when run returns MCP content blocks
    "asks_client": False,                    # optional: true when run uses context.elicit / sample / list_roots / ask
    "task_support": "optional",              # optional: forbidden (default), optional or required: MCP tasks
    "task_start": "call",                    # optional: "run" when run calls context.start_task() (see plugins.md)
}

A file declares one of `TOOL_SPEC`, `RESOURCE_SPEC` (resource_spec.py) and `PROMPT_SPEC` (prompt_spec.py); which one
it declares is its `kind`. `spec_kinds.parse_spec` checks whichever it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolsets.core.annotations import ToolHints
from toolsets.extensions.plugins.spec_common import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, some_profiles
from toolsets.profile_names import ProfileName

HINTS = {
    "readOnlyHint": "read_only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open_world",
}


class PluginSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["tool"] = "tool"
    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
    description: str = Field(min_length=1, max_length=10_000)
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = Field(default_factory=dict)
    version: str | None = Field(default=None, max_length=100)
    profiles: tuple[ProfileName, ...] = ("member",)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)
    # "content": `run` returns MCP content blocks (text, image, audio, resource, resource_link), sent as they are
    returns: Literal["structured", "content"] = "structured"
    # the tool puts questions to the client (context.elicit, sample, list_roots, ask): its calls take the path that
    # carries the client's answers
    asks_client: bool = False
    # whether a client may (optional) or must (required) run it as an MCP task, polling for its result
    task_support: Literal["forbidden", "optional", "required"] = "forbidden"
    # "run": the task starts where `run` calls `context.start_task()`; before it, the call runs while the client waits
    task_start: Literal["call", "run"] = "call"

    @model_validator(mode="after")
    def _task_start_needs_tasks(self) -> PluginSpec:
        if self.task_start == "run" and self.task_support == "forbidden":
            raise ValueError('"task_start": "run" needs "task_support" optional or required')
        return self

    @model_validator(mode="after")
    def _content_has_no_schema(self) -> PluginSpec:
        if self.returns == "content" and self.output_schema is not None:
            raise ValueError('a tool that returns "content" has no output_schema (its result is not structured)')
        return self

    @field_validator("description")
    @classmethod
    def _said_something(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must say what the tool does (the model reads it)")
        return value.strip()

    @field_validator("version", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            check_object_schema(value)
        return value

    @field_validator("annotations")
    @classmethod
    def _known_hints(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(HINTS) - {"title"})
        if unknown:
            raise ValueError(f"unknown keys {unknown}; the MCP hints are {', '.join(HINTS)}")
        for key in HINTS:
            if key in value and not isinstance(value[key], bool):
                raise ValueError(f"{key} must be true or false")
        if value.get("readOnlyHint") and value.get("destructiveHint"):
            raise ValueError("a read-only tool cannot be destructive")
        return value

    _some_profiles = field_validator("profiles", mode="before")(some_profiles)

    @property
    def key(self) -> str:
        """What names it in the catalog (and what two files may not both serve)."""
        return self.name

    @property
    def retry_safe(self) -> bool:
        """A call interrupted by another call's crash may run again."""
        return self.hints.read_only or self.hints.idempotent

    @property
    def hints(self) -> ToolHints:
        return ToolHints(**{field: self.annotations[key] for key, field in HINTS.items() if key in self.annotations})


def check_object_schema(schema: Mapping[str, Any]) -> None:
    """A valid JSON Schema (its own `$schema` dialect, else 2020-12) describing an object, as MCP requires."""
    from jsonschema import SchemaError, validators

    if schema.get("type") != "object":
        raise ValueError('must be a JSON Schema of an object: {"type": "object", "properties": {...}}')
    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "the schema"
        raise ValueError(f"is not a valid JSON Schema ({where}: {exc.message})") from None
