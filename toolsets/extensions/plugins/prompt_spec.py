"""`PROMPT_SPEC`: a plugin file that serves one MCP prompt.

PROMPT_SPEC = {
    "name": "weekly_review",                    # required: letters, digits, _ . - (at most 64)
    "title": "Weekly review",                   # optional: what a host shows
    "description": "Review the week's events",  # optional
    "arguments": [                              # optional: each a string on the wire
        {"name": "week", "description": "ISO week, e.g. 2026-W10", "required": True},
    ],
    "completions": {"week": ["2026-W10"]},      # optional: values completion offers per argument
    "profiles": ["member"],                     # optional: member (default), notification-safe, guest
    "timeout_s": 30,                            # optional: seconds a get may take (default 30, at most 600)
}

`run(arguments, context)` returns the messages: a `str` (one user message), a list of messages
`{"role": "user" | "assistant", "content": <an MCP content block>}`, or `{"description": ..., "messages": [...]}`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolsets.extensions.plugins.spec_common import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, some_profiles
from toolsets.profile_names import ProfileName

MAX_ARGUMENTS = 32
MAX_COMPLETIONS = 1000


class PromptArgumentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
    title: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=2000)
    required: bool = False


class PromptSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["prompt"] = "prompt"
    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
    title: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    arguments: tuple[PromptArgumentSpec, ...] = Field(default=(), max_length=MAX_ARGUMENTS)
    completions: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    version: str | None = Field(default=None, max_length=100)
    profiles: tuple[ProfileName, ...] = ("member",)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)

    _some_profiles = field_validator("profiles", mode="before")(some_profiles)

    @model_validator(mode="after")
    def _consistent(self) -> PromptSpec:
        names = [argument.name for argument in self.arguments]
        if len(set(names)) != len(names):
            raise ValueError("two arguments have one name")
        unknown = sorted(set(self.completions) - set(names))
        if unknown:
            raise ValueError(f"completions for {unknown}, which are not arguments")
        if sum(len(values) for values in self.completions.values()) > MAX_COMPLETIONS:
            raise ValueError(f"at most {MAX_COMPLETIONS} completion values in all")
        return self

    @property
    def key(self) -> str:
        """What names it in the catalog: prompts have names of their own, apart from tools'."""
        return f"prompt:{self.name}"

    @property
    def retry_safe(self) -> bool:
        return True  # getting a prompt changes nothing

    def checked_arguments(self, given: dict[str, object] | None) -> dict[str, str]:
        """The arguments as given, checked against the spec; ValueError says what to change."""
        given = dict(given or {})
        known = {argument.name for argument in self.arguments}
        unknown = sorted(set(given) - known)
        if unknown:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"{self.name} has no argument {', '.join(unknown)}; its arguments are: {listed}.")
        checked: dict[str, str] = {}
        for argument in self.arguments:
            value = given.get(argument.name)
            if value is None:
                if argument.required:
                    about = f": {argument.description}" if argument.description else ""
                    raise ValueError(f"{self.name} needs the argument {argument.name}{about}.")
                continue
            if not isinstance(value, str):
                raise ValueError(f"{argument.name} must be a string.")
            if len(value) > 100_000:
                raise ValueError(f"{argument.name} is too long ({len(value)} characters; at most 100000).")
            checked[argument.name] = value
        return checked
