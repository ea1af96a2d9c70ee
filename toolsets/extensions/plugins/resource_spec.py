"""`RESOURCE_SPEC`: a plugin file that serves one MCP resource (a fixed `uri`) or a family of them (`uri_template`).

RESOURCE_SPEC = {
    "uri": "notes://today",                    # a fixed URI ...
    # "uri_template": "notes://day/{date}",    # ... or an RFC 6570 template (exactly one of the two):
    #                                            {name} is one segment, {+name} a path (uri_template.py)
    "name": "today",                           # required: a short name
    "title": "Today's notes",                  # optional: what a host shows
    "description": "The notes of today",       # optional
    "mime_type": "text/markdown",              # optional: the contents' type when `run` does not say
    "completions": {"date": ["2026-01-01"]},   # optional (templates): values completion offers per variable
    "profiles": ["member"],                    # optional: member (default), notification-safe, guest
    "timeout_s": 30,                           # optional: seconds a read may take (default 30, at most 600)
}

`run(params, context)` returns the contents: a `str` (text), `bytes` (binary), one dict `{"text": ...}` or
`{"blob": <base64>}` (with an optional `mime_type` and `uri`), or a list of such dicts. `params` holds the
template's variables (`{}` for a fixed URI), percent-decoded and checked (uri_template.py): a `{name}` holds no
`/`, `\\`, `..` or NUL, a `{+name}` is a relative path without `.` or `..` segments, to open with
`context.open_data(path)` (inside the plugin's data folder, no symlink followed out of it).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolsets.extensions.plugins import uri_template
from toolsets.extensions.plugins.spec_common import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, some_profiles
from toolsets.profile_names import ProfileName

MAX_URI = 2048
# a URI: a scheme, then anything but whitespace; the scheme names no built-in resource
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,31}:\S{1,2000}$")
RESERVED_SCHEMES = ("truloop",)  # the server's own resources
MAX_COMPLETIONS = 1000


class ResourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["resource"] = "resource"
    uri: str | None = Field(default=None, max_length=MAX_URI)
    uri_template: str | None = Field(default=None, max_length=MAX_URI)
    name: str = Field(min_length=1, max_length=200)
    title: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    mime_type: str | None = Field(default=None, max_length=200, pattern=r"^[\w.+-]+/[\w.+-]+(;.{0,100})?$")
    completions: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    version: str | None = Field(default=None, max_length=100)
    profiles: tuple[ProfileName, ...] = ("member",)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)

    _some_profiles = field_validator("profiles", mode="before")(some_profiles)

    @field_validator("uri", "uri_template")
    @classmethod
    def _a_uri(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not URI.match(value) or "\x00" in value:
            raise ValueError("must be an absolute URI with a scheme, e.g. notes://today")
        scheme = value.split(":", 1)[0].lower()
        if scheme in RESERVED_SCHEMES:
            raise ValueError(f"the scheme {scheme}: is the server's own; choose another")
        return value

    @field_validator("completions")
    @classmethod
    def _bounded(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        if sum(len(values) for values in value.values()) > MAX_COMPLETIONS:
            raise ValueError(f"at most {MAX_COMPLETIONS} values in all")
        return value

    @model_validator(mode="after")
    def _one_address(self) -> ResourceSpec:
        if (self.uri is None) == (self.uri_template is None):
            raise ValueError("give exactly one of uri (a fixed resource) and uri_template (a family of them)")
        if self.uri_template is not None:
            names = self.variables
            if not names:
                raise ValueError("uri_template names no {variable}; use uri for a fixed resource")
            if len(set(names)) != len(names):
                raise ValueError("uri_template names a variable twice")
            unknown = sorted(set(self.completions) - set(names))
            if unknown:
                raise ValueError(f"completions for {unknown}, which the template does not name")
        elif self.completions:
            raise ValueError("completions are for the variables of a uri_template")
        return self

    @property
    def key(self) -> str:
        """What names it in the catalog (and what two files may not both serve)."""
        return self.uri or self.uri_template or ""

    @property
    def variables(self) -> list[str]:
        return uri_template.variables(self.uri_template or "")

    @property
    def retry_safe(self) -> bool:
        return True  # a read changes nothing

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables in `uri` (decoded, not yet checked), or None when `uri` is not of this resource."""
        if self.uri is not None:
            return {} if uri == self.uri else None
        return uri_template.match(self.uri_template or "", uri)

    def checked_params(self, params: dict[str, str]) -> dict[str, str]:
        """`params` as `match` found them, once each is safe (ValueError naming the one that is not)."""
        return uri_template.checked(self.uri_template, params) if self.uri_template is not None else params
