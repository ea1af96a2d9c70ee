"""Plugin resources, resource templates and prompts: listed per profile, read and got, their results in MCP's shapes.

Each is read or got through the version that serves it, and its result checked (plain JSON, no SDK). A template's
parameters are checked once decoded before the plugin runs (uri_template.py); a read or get takes a slot of its
plugin and of its caller (view_slots.py); a resource's contents are bounded (`--max-resource-bytes`): past it the
read is refused, measured before anything is encoded or copied.

A resource's `run(params, context)` returns a `str` (text), `bytes` (binary), one `{"text": ...}` /
`{"blob": <base64>}` dict (with optional `mime_type` / `mimeType` and `uri`) or a list of them. A prompt's
`run(arguments, context)` returns a `str` (one user message), a list of messages `{"role", "content"}` or
`{"description": ..., "messages": [...]}`; each message's content is an MCP content block (or a string: text).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolsets.core.content import ContentBlock, ResourceContents
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.problems import describe
from toolsets.extensions.plugins.content_bound import over_bound, too_large
from toolsets.extensions.plugins.context import DEFAULT_MAX_READ_BYTES
from toolsets.extensions.plugins.spec_common import offered
from toolsets.extensions.plugins.tool import json_value

if TYPE_CHECKING:
    from toolsets.core.context import ToolContext
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.extensions.plugins.prompt_spec import PromptSpec
    from toolsets.extensions.plugins.resource_spec import ResourceSpec
    from toolsets.extensions.plugins.version import PluginVersion

MAX_CONTENTS = 64


class PromptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: ContentBlock


class PromptResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = None
    messages: list[PromptMessage] = Field(min_length=1, max_length=MAX_CONTENTS)


@dataclass(frozen=True, slots=True)
class FoundResource:
    version: PluginVersion
    params: dict[str, str]

    @property
    def spec(self) -> ResourceSpec:
        return self.version.spec  # type: ignore[return-value]  # only resource versions are found


class PluginViews:
    """The catalog's resources, templates and prompts, as one profile sees them."""

    def __init__(self, catalog: PluginCatalog) -> None:
        self.catalog = catalog

    @property
    def max_bytes(self) -> int:
        config = self.catalog.config
        return config.max_resource_bytes if config is not None else DEFAULT_MAX_READ_BYTES

    def resources(self, profile: str) -> list[ResourceSpec]:
        specs = [v.spec for v in self.catalog.resources() if offered(v.spec.profiles, profile)]
        return [spec for spec in specs if getattr(spec, "uri", None)]  # type: ignore[misc]  # resource specs

    def templates(self, profile: str) -> list[ResourceSpec]:
        specs = [v.spec for v in self.catalog.resources() if offered(v.spec.profiles, profile)]
        return [spec for spec in specs if getattr(spec, "uri_template", None)]  # type: ignore[misc]  # resource specs

    def find(self, uri: str, profile: str) -> FoundResource | None:
        """The resource `uri` names for this profile: a fixed URI first, then the first template that matches."""
        versions = [v for v in self.catalog.resources() if offered(v.spec.profiles, profile)]
        for fixed in (True, False):
            for version in versions:
                spec: ResourceSpec = version.spec  # type: ignore[assignment]  # resource versions only
                if (spec.uri is not None) != fixed:
                    continue
                params = spec.match(uri)
                if params is not None:
                    return FoundResource(version, params)
        return None

    def template(self, uri_template: str, profile: str) -> ResourceSpec | None:
        return next((spec for spec in self.templates(profile) if spec.uri_template == uri_template), None)

    def prompts(self, profile: str) -> list[PromptSpec]:
        return [v.spec for v in self.catalog.prompts().values() if offered(v.spec.profiles, profile)]  # type: ignore[misc]  # prompt specs

    def prompt(self, name: str, profile: str) -> PluginVersion | None:
        version = self.catalog.prompts().get(name)
        return version if version is not None and offered(version.spec.profiles, profile) else None

    async def read(self, found: FoundResource, uri: str, ctx: ToolContext[Any]) -> list[dict[str, Any]]:
        """The contents of `uri`, as `resources/read` answers them; raises what the call raised (ToolError...), and
        ValueError naming a parameter that is not safe (before the plugin runs)."""
        spec = found.spec
        params = spec.checked_params(dict(found.params))
        limit = self.max_bytes
        with self.catalog.view_slots.held(spec.key, spec.name, ctx.caller.user_id):
            try:
                raw = await found.version.call(params, ctx, max_read_bytes=limit)
            except Exception as exc:
                if type(exc).__name__ == "ResourceTooLarge":  # context.read_data, here or in a worker
                    raise too_large(spec.name, limit) from None
                raise
        if over_bound(raw, limit):
            del raw  # not kept alive by the error's traceback
            raise too_large(spec.name, limit)
        return resource_contents(raw, uri, spec.mime_type, spec.name)

    async def get(self, version: PluginVersion, arguments: dict[str, Any], ctx: ToolContext[Any]) -> dict[str, Any]:
        """The prompt's result, as `prompts/get` answers it; ValueError for arguments that do not fit."""
        spec: PromptSpec = version.spec  # type: ignore[assignment]  # a prompt version
        checked = spec.checked_arguments(arguments)
        with self.catalog.view_slots.held(spec.key, spec.name, ctx.caller.user_id):
            raw = await version.call(checked, ctx)
        return prompt_result(raw, spec)


def resource_contents(raw: Any, uri: str, mime_type: str | None, name: str) -> list[dict[str, Any]]:
    if isinstance(raw, bytes | bytearray):
        raw = {"blob": base64.b64encode(bytes(raw)).decode("ascii")}
    raw = json_value(raw, name)
    items = raw if isinstance(raw, list) else [raw]
    if not items or len(items) > MAX_CONTENTS:
        raise _broken(name, f"give 1 to {MAX_CONTENTS} contents")
    contents: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise _broken(name, "each content is a string, bytes or a {'text' | 'blob': ...} dict")
        item = dict(item)
        if "mime_type" in item:
            item["mimeType"] = item.pop("mime_type")
        item.setdefault("uri", uri)
        if mime_type is not None:
            item.setdefault("mimeType", mime_type)
        try:
            contents.append(
                ResourceContents.model_validate(item).model_dump(mode="json", by_alias=True, exclude_none=True)
            )
        except ValidationError as exc:
            raise _broken(name, describe(exc, whole="contents", limit=3)) from None
    return contents


def prompt_result(raw: Any, spec: PromptSpec) -> dict[str, Any]:
    raw = json_value(raw, spec.name)
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list):
        raw = {"messages": raw}
    if not isinstance(raw, dict):
        raise _broken(spec.name, "return a string, a list of messages or {'messages': [...]}")
    messages = []
    for message in raw.get("messages") or []:
        if isinstance(message, str):
            message = {"role": "user", "content": {"type": "text", "text": message}}
        elif isinstance(message, dict) and isinstance(message.get("content"), str):
            message = {**message, "content": {"type": "text", "text": message["content"]}}
        messages.append(message)
    try:
        result = PromptResult.model_validate({**raw, "messages": messages})
    except ValidationError as exc:
        raise _broken(spec.name, describe(exc, whole="result", limit=3)) from None
    if result.description is None and spec.description:
        result = result.model_copy(update={"description": spec.description})
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _broken(name: str, why: str) -> ToolError:
    return ToolError(f"The plugin {name} returned something MCP cannot carry ({why}); it needs fixing.",
                     code=ErrorCode.HANDLER_ERROR)  # fmt: skip
