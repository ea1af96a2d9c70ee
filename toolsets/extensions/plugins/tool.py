"""Plugins: tools the operator added as Python files in the tools folder (`--tools-dir`).

`PluginTool` is a `Tool` whose schema is the plugin's JSON Schema rather than a typed function: its
arguments are validated against `input_schema`, its result against `output_schema` when one is given,
and a call runs on the version the tool was published from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, RootModel

from toolsets.core.call_notes import Route
from toolsets.core.content import content_of
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError, ToolInputError
from toolsets.core.tool import TaskSupport, Tool
from toolsets.extensions.plugins.spec_common import offered

if TYPE_CHECKING:
    from toolsets.extensions.plugins.version import PluginVersion

PLUGINS_TOOLSET = "plugins"
MAX_PROBLEMS = 5


class PluginArguments(BaseModel):
    """A plugin's arguments, already checked against its JSON Schema (kept as given)."""

    model_config = ConfigDict(extra="allow")


class PluginResult(RootModel[dict[str, Any]]):
    """A plugin's result: its object, or `{"result": value}` for anything that is not an object."""


class PluginTool(Tool):
    def __init__(self, version: PluginVersion) -> None:  # no super(): there is no typed function to inspect
        self.version = version
        self.precheck = None  # a plugin declares no check to run before confirmation
        self.name = version.tool_spec.name
        self.toolset = PLUGINS_TOOLSET
        self.hints = version.tool_spec.hints
        self.device = None
        self.asks_client = version.tool_spec.asks_client  # its calls then take the path that carries the answers
        self.asks_user = False
        self.question = None  # its calls are confirmed with the generic question (its values, labelled)
        self.function = self.run  # what a typed tool's function is to it (its module documents the toolset)

    @property
    def description(self) -> str:
        return self.version.tool_spec.description

    @property
    def task_support(self) -> TaskSupport:
        return self.version.tool_spec.task_support

    @property
    def task_starts_in_run(self) -> bool:
        return self.version.tool_spec.task_start == "run"

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.version.tool_spec.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:  # type: ignore[override]  # a plugin may declare no output schema
        return self.version.tool_spec.output_schema

    @property
    def args_model(self) -> type[BaseModel]:
        return PluginArguments

    @property
    def result_model(self) -> type[BaseModel]:
        return PluginResult

    @property
    def profiles(self) -> tuple[str, ...]:
        return self.version.tool_spec.profiles

    def unknown_keys(self, raw: Mapping[str, Any]) -> list[str]:
        """Keys the schema forbids (`additionalProperties: false`): ignored, as for every tool."""
        schema = self.input_schema
        if schema.get("additionalProperties", True) is not False:
            return []
        known = schema.get("properties") or {}
        return sorted(key for key in raw if key not in known)

    def parse_arguments(self, raw: Mapping[str, Any]) -> BaseModel:
        ignored = set(self.unknown_keys(raw))
        arguments = {key: value for key, value in raw.items() if key not in ignored}
        errors = sorted(self.version.input_validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            raise ToolInputError(_described(errors))
        return PluginArguments.model_validate(arguments)

    async def run(
        self, ctx: ToolContext[Any], arguments: BaseModel, version: PluginVersion | None = None, route: Route = "stable"
    ) -> BaseModel:
        """Run on `version` (the canary router's choice; this tool's own version by default)."""
        version = version or self.version
        value = json_value(await version.call(arguments.model_dump(), ctx, route), self.name)
        if version.tool_spec.returns == "content":
            try:
                return content_of(value)
            except ValueError as exc:
                raise ToolError(
                    f"The tool {self.name} returned content that MCP cannot carry ({exc}); the plugin needs fixing.",
                    code=ErrorCode.HANDLER_ERROR,
                ) from None
        validator = version.output_validator
        if validator is not None:
            errors = list(validator.iter_errors(value))
            if errors:
                raise ToolError(
                    f"The tool {self.name} returned a result that does not match its output_schema "
                    f"({_described_result(errors)}); the plugin needs fixing.",
                    code=ErrorCode.HANDLER_ERROR,
                )
        return PluginResult(value if isinstance(value, dict) else {"result": value})


def is_plugin(tool: Tool) -> bool:
    return isinstance(tool, PluginTool)


def offered_to(tool: Tool, profile: str) -> bool:
    """A plugin asks for its profiles; notification-safe is a part of member, so it implies member."""
    return isinstance(tool, PluginTool) and offered(tool.profiles, profile)


def json_value(value: Any, name: str) -> Any:
    """The plugin's result as plain JSON data, or a handler_error saying why not: an object JSON cannot hold,
    NaN or infinity, a cycle, or a string with a lone surrogate (it has no UTF-8 form)."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")  # a lone surrogate passes json.dumps but can never be sent
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:  # (UnicodeEncodeError is a ValueError)
        raise ToolError(
            f"The tool {name} returned a result that is not JSON data ({exc}); the plugin needs fixing.",
            code=ErrorCode.HANDLER_ERROR,
        ) from None


def _described_result(errors: list[Any]) -> str:
    """Where a result breaks its output_schema and which rule, without the values found there: a result may carry
    the caller's words, and this message is feedback another user (the tool's author) reads."""
    parts = []
    for error in errors[:MAX_PROBLEMS]:
        where = ".".join(str(part) for part in error.absolute_path) or "result"
        rule = json.dumps(error.validator_value, ensure_ascii=False, default=str)[:200]
        parts.append(f"{where}: fails {error.validator} {rule}")
    return "; ".join(parts)


def _described(errors: list[Any]) -> str:
    parts = []
    for error in errors[:MAX_PROBLEMS]:
        where = ".".join(str(part) for part in error.absolute_path) or "arguments"
        parts.append(f"{where}: {error.message[:300]}")
    return "; ".join(parts)
