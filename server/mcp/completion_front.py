"""`completion/complete`: values for prompt arguments and resource-template variables, scoped to the caller.

- prompt `plan_meeting`, argument `people`: names as `search_users` finds them (`민` -> `김민지`, `Kim Minji`; in a
  comma-separated list, the last name);
- prompt `prepare_for_event` and template `truloop://events/{event_id}`, `event_id`: ids of the events the caller
  can see, by id or title;
- template `truloop://docs/{path}`, `path`: document paths;
- arguments with fixed values (`language`, `unread_only`): `ko`/`en`, `true`/`false`.

- a plugin's prompt argument or template variable: the values its spec lists (`completions`) that start with what was
  typed (without case).

At most 100 values; `hasMore` when there were more. Anything else completes to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp.types as types

from server.mcp.admitted import admitted
from toolsets.admission.kinds import RequestKind
from toolsets.views.completion_values import Completed, Completions, bounded
from toolsets.views.prompt_catalog import prompts_for
from toolsets.views.uris import DOC_TEMPLATE, EVENT_TEMPLATE

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from server.mcp.resources import ResourceFront
    from toolsets.core.context import Caller

FIXED: dict[str, list[str]] = {"language": ["ko", "en"], "unread_only": ["true", "false"]}


class CompletionFront:
    def __init__(self, server: TruloopMCP, resources: ResourceFront, completions: Completions) -> None:
        self._server = server
        self._resources = resources
        self._completions = completions

    async def complete(self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams) -> Any:
        target = getattr(params.ref, "name", None) or getattr(params.ref, "uri", "")
        async with admitted(self._server, ctx, RequestKind.COMPLETE, str(target)) as who:
            done = await self._values(params.ref, params.argument.name, params.argument.value or "", who)
        return types.CompleteResult(
            completion=types.Completion(values=done.values, total=done.total, has_more=done.has_more or None)
        )

    async def _values(self, ref: Any, argument: str, partial: str, who: tuple[Caller, str]) -> Completed:
        scope = await self._resources.scope(who)
        listed = self._plugin_values(ref, argument, scope.profile)
        if listed is not None:
            needle = partial.casefold()
            return bounded([value for value in listed if value.casefold().startswith(needle)])
        kind: str | None = None
        if isinstance(ref, types.PromptReference):
            prompt = next((p for p in prompts_for(scope) if p.name == ref.name), None)
            spec = prompt.argument(argument) if prompt is not None else None
            kind = spec.kind if spec is not None else None
            if spec is not None and spec.name in FIXED:
                return bounded([value for value in FIXED[spec.name] if value.startswith(partial.strip().lower())])
        elif isinstance(ref, types.ResourceTemplateReference):
            if ref.uri == DOC_TEMPLATE and argument == "path":
                kind = "document"
            elif ref.uri == EVENT_TEMPLATE and argument == "event_id":
                kind = "event"
        if kind == "people":
            return await self._completions.people(scope, partial)
        if kind == "event":
            return await self._completions.events(scope, partial)
        if kind == "document":
            return await self._completions.documents(scope, partial)
        return Completed([])

    def _plugin_values(self, ref: Any, argument: str, profile: str) -> tuple[str, ...] | None:
        """The values a plugin's spec lists for this argument, or None when the reference is not a plugin's."""
        plugins = self._resources.plugins
        if plugins is None:
            return None
        spec: Any = None
        if isinstance(ref, types.PromptReference):
            version = plugins.prompt(ref.name, profile)
            spec = version.spec if version is not None else None
        elif isinstance(ref, types.ResourceTemplateReference):
            spec = plugins.template(ref.uri, profile)
        if spec is None:
            return None
        return tuple(spec.completions.get(argument, ()))
