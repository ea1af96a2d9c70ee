"""MCP prompts: `prompts/list` (paged) and `prompts/get`, from `toolsets.views.prompt_catalog`, offered per the
caller's tools.

A prompt's title and description carry English and Korean (`Plan a meeting / 회의 잡기`). Prompts that plugin files
serve follow the built-in ones (their names cannot be a built-in prompt's); `prompts/list_changed` tells sessions
that listed prompts when plugins change them. Arguments that are
missing, unknown or malformed, an unknown prompt, or an event the caller cannot see are refused with -32602
(Invalid params) and a message that says what to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.subscriptions import PromptsListChanged
from mcp.shared.exceptions import MCPError

from server.mcp.admitted import admitted
from server.mcp.listing_sessions import ListingSessions
from server.sdk_compat import subscriptions_of
from toolsets.admission.kinds import RequestKind
from toolsets.views.prompt_catalog import PromptArgumentsError, check_arguments, find_prompt, prompts_for, render

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from server.mcp.resources import ResourceFront
    from toolsets.core.context import Caller


class PromptFront:
    def __init__(self, server: TruloopMCP, resources: ResourceFront) -> None:
        self._server = server
        self._resources = resources
        self._listing = ListingSessions("prompts", server)

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> Any:
        scope = await self._resources.scope()
        self._listing.remember(ctx)
        found: list[Any] = [*prompts_for(scope)]
        plugins = self._resources.plugins
        if plugins is not None:
            found.extend(plugins.prompts(scope.profile))
        page, next_cursor = self._server.pager.page(found, params, "prompts")
        prompts = [
            types.Prompt(
                name=prompt.name,
                title=prompt.title,
                description=prompt.description,
                arguments=[
                    types.PromptArgument(name=a.name, title=a.title, description=a.description, required=a.required)
                    for a in prompt.arguments
                ],
            )
            for prompt in page
        ]
        return types.ListPromptsResult(prompts=prompts, next_cursor=next_cursor)

    async def announce_changed(self) -> None:
        """Plugins changed the prompts: the handshake-era sessions that listed them, and 2026-07-28 listeners."""
        await self._listing.tell(lambda connection: connection.send_prompt_list_changed())
        await subscriptions_of(self._server).publish(PromptsListChanged())

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams) -> Any:
        async with admitted(self._server, ctx, RequestKind.PROMPT, params.name, params.arguments) as who:
            return await self._get(ctx, params, who)

    async def _get(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams, who: tuple[Caller, str]
    ) -> Any:
        scope = await self._resources.scope(who)
        plugins = self._resources.plugins
        version = plugins.prompt(params.name, scope.profile) if plugins is not None else None
        if plugins is not None and version is not None:
            requests = self._resources.requests
            call = plugins.get(version, dict(params.arguments or {}), await requests.context(ctx, params, who))
            result = await requests.answer(params.name, call)
            return types.GetPromptResult.model_validate(result) if isinstance(result, dict) else result
        try:
            prompt = find_prompt(scope, params.name)
            arguments = check_arguments(prompt, params.arguments)
        except PromptArgumentsError as invalid:
            raise MCPError(code=types.INVALID_PARAMS, message=str(invalid)) from None
        event_id = arguments.get("event_id")
        if event_id is not None and await self._resources.catalog.event(scope, event_id) is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"No event {event_id!r} that you can see; completion offers your events' ids, "
                "and the resource truloop://events lists them.",
            )
        text = render(prompt, arguments, scope)
        return types.GetPromptResult(
            description=prompt.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )
