"""Composing relay notifications with the client's model (MCP sampling), tools included.

When the client declared `sampling.tools`, the notification-safe tools are offered to its model
and every `tool_use` it asks for runs back through the front door in that profile, at most MAX_ROUNDS times. On
2026-07-28 each round is an `InputRequiredResult`; tool results are kept in the sealed state,
so a retried call never runs a tool twice. Without sampling the relay falls back to a template.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import mcp.types as types

from bridge.elicitation import CannotAsk, McpAsker
from toolsets.core.context import ComposeRequest, ToolContext, nested_context
from toolsets.core.dispatch import dispatch
from toolsets.core.envelope import ToolInputRequired, ToolOk
from toolsets.core.errors import InputRequired
from toolsets.core.toolset import AbstractToolset

if TYPE_CHECKING:
    from toolsets.core.envelope import ToolResult

logger = logging.getLogger("truloop.sampling")

MAX_ROUNDS = 4
SAFE_PROFILE = "notification-safe"  # the profile whose tools the composing model is offered (the relay's choice)
SYSTEM_PROMPT = (
    "You write one short push notification (at most two sentences, plain text, in the language of the "
    "message) telling the recipient what the sender wants them to know. Keep names, dates and places exact; "
    "use the tools only when a fact (a date, a place) needs checking. Reply with the notification text only."
)


def mcp_tools(toolset: AbstractToolset) -> list[types.Tool]:
    return [
        types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema) for tool in toolset
    ]


class SamplingComposer:
    def __init__(self, asker: McpAsker) -> None:
        self._asker = asker

    async def compose(self, request: ComposeRequest, ctx: ToolContext) -> str | None:
        if not self._asker.can_sample():
            return None
        offer_tools = self._asker.can_sample(with_tools=True) and len(request.tools) > 0
        prompt = (
            f"Sender: {request.sender_name}\nRecipient: {request.recipient_name}\n"
            f"Sender's time zone: {request.recipient_timezone}\nMessage:\n{request.message}"
        )
        messages = [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))]
        tools = mcp_tools(request.tools) if offer_tools else None
        inner = nested_context(ctx)
        for round_no in range(MAX_ROUNDS):
            params = types.CreateMessageRequestParams(
                messages=messages,
                max_tokens=400,
                system_prompt=SYSTEM_PROMPT,
                tools=tools,
                tool_choice=types.ToolChoice(mode="auto") if tools else None,
            )
            try:
                result = await self._asker.sample(f"truloop/compose/{round_no}", params)
            except CannotAsk:
                return None
            blocks = result.content_as_list
            uses = [block for block in blocks if isinstance(block, types.ToolUseContent)]
            if not uses:
                text = " ".join(block.text for block in blocks if isinstance(block, types.TextContent)).strip()
                return text or None
            outputs = await self._run_tools(f"truloop/compose/{round_no}/tools", uses, request.tools, inner)
            messages.append(types.SamplingMessage(role="assistant", content=list(blocks)))
            messages.append(types.SamplingMessage(role="user", content=outputs))
        logger.info("the client's model kept calling tools; falling back to the template")
        return None

    @staticmethod
    async def _call(use: types.ToolUseContent, toolset: AbstractToolset, ctx: ToolContext[Any]) -> ToolResult:
        """One tool use, back through the front door in the notification-safe profile (exposure, the directory,
        the profile's middleware: the audit line, gates, confirmation); a bare toolset's call has no door and is
        dispatched on `toolset` itself."""
        if ctx.door is None:
            return await dispatch(toolset, use.name, use.input, ctx)
        safe = replace(ctx, request=replace(ctx.request, profile=SAFE_PROFILE))
        return await ctx.door.call(safe, use.name, use.input)

    async def _run_tools(
        self, key: str, uses: list[types.ToolUseContent], toolset: AbstractToolset, ctx: ToolContext[Any]
    ) -> list[Any]:
        """Run the model's tool uses in order; each finished one is remembered at once, so a use that has
        to ask the client first (confirmation, a deferred tool) suspends the call and, on the retry, the
        uses before it are not run again."""
        done: list[dict[str, Any]] = list(self._asker.recall(key) or [])
        for use in uses[len(done) :]:
            outcome = await self._call(use, toolset, ctx)
            if isinstance(outcome, ToolInputRequired):
                raise InputRequired(outcome.payload)
            if isinstance(outcome, ToolOk):
                text, failed = json.dumps(outcome.data.model_dump(mode="json"), ensure_ascii=False), False
            else:
                text, failed = json.dumps(outcome.structured(), ensure_ascii=False), True
            done.append({"id": use.id, "text": text, "error": failed})
            self._asker.remember(key, done)
        return [
            types.ToolResultContent(
                type="tool_result",
                tool_use_id=item["id"],
                content=[types.TextContent(type="text", text=item["text"])],
                is_error=item["error"],
            )
            for item in done
        ]
