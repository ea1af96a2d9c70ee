"""Deferred tools: declared once, where the tool is defined, as data the bridge reads.

    @toolset.tool(hints=READ_ONLY, device=DeviceMethod("permissions.getStatus", {"permission": "permission"}))
    async def get_permission_status(notification_message: ..., permission: ...) -> PermissionStatusResult:
        raise CallDeferred(notification_message=notification_message)

`DeviceMethod` names the JSON-RPC method on the device and how the tool's arguments become its params;
the device's result is the tool's own result model, validated strictly (`"yes"` is not a boolean).
`form` says how an MCP client's user can answer instead when no device is connected (None: cannot), in
the caller's language.
The bridge's registry (`DeviceTools`) is derived from the assembled toolsets, and refuses a
declaration that does not fit its tool before the server starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from toolsets.core.context import DeferredCall, ToolContext
from toolsets.core.errors import CallDeferred, ErrorCode, ToolError

if TYPE_CHECKING:
    from toolsets.core.call_notes import CallNotes
    from toolsets.core.tool import Tool
    from toolsets.core.toolset import AbstractToolset

_METHOD = re.compile(r"^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$")


@dataclass(frozen=True, slots=True)
class ElicitationForm:
    message: str
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DeviceMethod:
    method: str  # e.g. calendar.getEvents
    params: Mapping[str, str] = field(default_factory=dict)  # tool argument -> wire name; empty values left out
    # (arguments, the caller's locale) -> the form, worded in that language
    form: Callable[[Mapping[str, Any], str], ElicitationForm] | None = None

    def __post_init__(self) -> None:
        if not _METHOD.match(self.method):
            raise ValueError(f"device method {self.method!r} must look like namespace.methodName")

    def wire_params(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return {wire: arguments[name] for name, wire in self.params.items() if arguments.get(name) not in (None, "")}


def device_only(tool: Tool) -> bool:
    """A deferred tool only the device itself can answer: no form an MCP client's user could fill in instead, so a
    front that no device can reach cannot run it."""
    return tool.device is not None and tool.device.form is None


def device_result(tool: Tool, data: Any) -> BaseModel:
    """The device's (or a form's) answer as the tool's result; raises `ValidationError`."""
    return tool.result_model.model_validate(data, strict=True)


async def resolve_deferred(
    tool: Tool, arguments: BaseModel, deferred: CallDeferred, ctx: ToolContext[Any], notes: CallNotes | None = None
) -> Any:
    if tool.device is None:
        raise RuntimeError(f"tool {tool.name!r} raised CallDeferred but declares no device=DeviceMethod(...)")
    if ctx.deferred is None:
        raise ToolError(
            f"{tool.name} runs on the user's device, and no route to the device is available in this "
            "session: connect a device to the agent-rpc stream, or use a client that supports elicitation.",
            code=ErrorCode.NO_ROUTE,
        )
    call_args = deferred.arguments or arguments.model_dump(mode="json")
    return await ctx.deferred.resolve(DeferredCall(tool, call_args, deferred.notification_message, ctx.caller, notes))


class DeviceTools:
    """The deferred tools of an assembled server, by name and by device method."""

    def __init__(self, toolsets: Iterable[AbstractToolset]) -> None:
        self._by_name: dict[str, Tool] = {}
        self._by_method: dict[str, Tool] = {}
        for toolset in toolsets:
            for tool in toolset:
                if tool.device is not None and tool.name not in self._by_name:
                    self._add(tool, tool.device)

    def _add(self, tool: Tool, device: DeviceMethod) -> None:
        unknown = sorted(set(device.params) - set(tool.args_model.model_fields))
        if unknown:
            raise ValueError(f"deferred tool {tool.name!r}: params name arguments it does not have: {unknown}")
        other = self._by_method.get(device.method)
        if other is not None:
            raise ValueError(f"deferred tools {other.name!r} and {tool.name!r} both use {device.method!r}")
        self._by_name[tool.name] = tool
        self._by_method[device.method] = tool

    def get(self, tool_name: str) -> Tool | None:
        return self._by_name.get(tool_name)

    def by_method(self, method: str) -> Tool | None:
        return self._by_method.get(method)

    def names(self) -> list[str]:
        return list(self._by_name)
