"""One published tool: a typed async function, its hints, and schemas built on first use.

A tool's docstring is its description, each parameter carries a `Field(description=...)`, and it
returns a pydantic model. A first parameter annotated `ToolContext` (or `ToolContext[Deps]`)
receives the caller's context and is not part of the published schema.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model

from toolsets.core.annotations import ToolHints
from toolsets.core.context import ToolContext

if TYPE_CHECKING:
    from toolsets.core.deferred import DeviceMethod

ToolFunction = Callable[..., Awaitable[BaseModel]]
TaskSupport = Literal["forbidden", "optional", "required"]


def _is_context(annotation: Any) -> bool:
    return annotation is ToolContext or get_origin(annotation) is ToolContext


# Checks a call before confirmation is asked for (the arguments validated); raises a `ToolError` to refuse it.
Precheck = Callable[["ToolContext[Any]", BaseModel], Awaitable[None]]
# Words the question a person confirms a call with, in their language, naming its object as they know it (an
# event's title and time, a memory's text); None: the generic question (the arguments as labelled values).
Question = Callable[["ToolContext[Any]", Mapping[str, Any]], Awaitable[str | None]]


class Tool:
    __slots__ = (
        "__dict__", "asks_client", "asks_user", "device", "function", "hints", "name", "precheck", "question",
        "toolset",
    )  # fmt: skip

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str,
        toolset: str,
        hints: ToolHints,
        device: DeviceMethod | None = None,
        precheck: Precheck | None = None,
        asks_client: bool = False,
        asks_user: bool = False,
        question: Question | None = None,
    ) -> None:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"tool {name!r} must be an async function")
        if not (function.__doc__ or "").strip():
            raise TypeError(f"tool {name!r} needs a docstring: the model reads it to decide when to call the tool")
        self.name = name
        self.toolset = toolset
        self.function = function
        self.hints = hints
        self.device = device  # set: the tool runs on the user's device, through this JSON-RPC method
        # raises the tool's refusal (e.g. not_found) before the user is asked to confirm a call that cannot succeed
        self.precheck = precheck
        # set: the tool may ask the client's model to write part of its answer (`ctx.composer`)
        self.asks_client = asks_client
        # set: the tool itself may ask the user's yes (`ctx.confirmer`), as a destructive tool's call is asked
        self.asks_user = asks_user
        self.question = question  # set: the question a destructive call is confirmed with (else the generic one)

    @property
    def deferred(self) -> bool:
        return self.device is not None

    @property
    def reaches_client(self) -> bool:
        """Whether a call may need the client's side while it runs: the user's device (`device`), the user's yes
        (destructive tools are confirmed; `asks_user`) or the client's model (`asks_client`). A call of any other
        tool needs nothing from its front but the answer."""
        return self.device is not None or self.hints.destructive or self.asks_client or self.asks_user

    @property
    def task_support(self) -> TaskSupport:
        """Whether a client may run it as an MCP task (and then need not wait on it): a call that waits on the user's
        device or on a person may; the others answer at once."""
        return "optional" if self.reaches_client else "forbidden"

    @property
    def task_starts_in_run(self) -> bool:
        """Whether the call becomes a task only where it says so (`ClientPort.start_task`), not when it is made."""
        return False

    @cached_property
    def description(self) -> str:
        return inspect.cleandoc(self.function.__doc__ or "")

    @cached_property
    def _signature(self) -> tuple[bool, dict[str, tuple[Any, Any]], type[BaseModel]]:
        hints = get_type_hints(self.function, include_extras=True)
        takes_ctx = False
        fields: dict[str, tuple[Any, Any]] = {}
        for index, param in enumerate(inspect.signature(self.function).parameters.values()):
            annotation = hints.get(param.name, Any)
            if index == 0 and _is_context(annotation):
                takes_ctx = True
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        result = hints.get("return")
        if not (isinstance(result, type) and issubclass(result, BaseModel)):
            raise TypeError(f"tool {self.name!r} must declare a pydantic model as its return type")
        return takes_ctx, fields, result

    @cached_property
    def args_model(self) -> type[BaseModel]:
        _, fields, _ = self._signature
        model = create_model(  # type: ignore[call-overload]  # fields are built from the function's signature at run time
            f"{self.name}_arguments", __config__=ConfigDict(extra="ignore"), **fields
        )
        for field_name, info in model.model_fields.items():
            if not info.description:
                raise TypeError(f"parameter {field_name!r} of tool {self.name!r} needs Field(description=...)")
        return model

    @property
    def result_model(self) -> type[BaseModel]:
        return self._signature[2]

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        return schema

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return self.result_model.model_json_schema()

    def unknown_keys(self, raw: Mapping[str, Any]) -> list[str]:
        known = self._signature[1]  # the model's fields (its `model_fields`, without the class lookup per call)
        return sorted(key for key in raw if key not in known)

    def parse_arguments(self, raw: Mapping[str, Any]) -> BaseModel:
        """The validated arguments; raises pydantic's ValidationError, or ToolInputError saying what is wrong
        (a tool whose schema is not a pydantic model, such as a plugin's JSON Schema, validates its own way)."""
        return self.args_model.model_validate(raw)

    async def run(self, ctx: ToolContext[Any], arguments: BaseModel) -> BaseModel:
        """Call the function itself (no policy, no deferral): the innermost step of a call."""
        kwargs = {name: getattr(arguments, name) for name in self._signature[1]}  # (the fields of `args_model`)
        if self._signature[0]:
            return await self.function(ctx, **kwargs)
        return await self.function(**kwargs)
