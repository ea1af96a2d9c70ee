"""MCP resources: `resources/list`, `resources/templates/list`, `resources/read`, `resources/subscribe` and
`resources/unsubscribe`, over the caller's views (`toolsets.views.resource_views`), paged (`server.mcp.pagination`).

Subscriptions, by era:
- handshake era (2025-06-18, 2025-11-25): `resources/subscribe` records the URI for that session (once the caller
  may see it); a change sends `notifications/resources/updated` to the subscribed sessions only;
- 2026-07-28: `subscriptions/listen` with `resourceSubscriptions` (served here over the server's `ScopedBus`, so a
  stream hears only of resources its caller may see); the list changing (documents came or went) is
  `ResourcesListChanged` on the same streams.
Changes come from the deployment's `ResourceChanges` (the knowledge index re-indexing a document, a new inbox
message), from this replica or, through Redis, from another.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import mcp.types as types
from mcp.server.subscriptions import ListenHandler, ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError

from server.mcp.admitted import admitted
from server.mcp.listing_sessions import ListingSessions
from server.mcp.plugin_requests import PluginRequests
from server.sdk_compat import connection_of
from toolsets.admission.kinds import RequestKind
from toolsets.core.echo import echo
from toolsets.views.changes import ResourceChange
from toolsets.views.resource_views import ResourceCatalog, UnknownResourceError
from toolsets.views.scope import ViewScope
from toolsets.views.uris import DOC_PREFIX

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from server.mcp.resource_bus import ScopedBus
    from toolsets.core.context import Caller
    from toolsets.extensions.plugins.served_views import PluginViews
    from toolsets.views.changes import ResourceChanges

logger = logging.getLogger("truloop.resources")

MAX_LISTEN_STREAMS = 1024
# `resources/subscribe`: at most this many URIs per session (docs/security.md, per-user caps; docs/hosts.md);
# past it a new URI is refused with -32602 (re-subscribing to one already held is fine), unsubscribe frees one
MAX_SUBSCRIPTIONS_PER_SESSION = 100


def checked_uri(params: Any) -> str:
    """The request's URI, refused (-32602, naming the problem) if it has a NUL, raw or percent-encoded: no
    resource has one, and a path with one cannot be opened (it would fail as an error with no JSON-RPC code)."""
    uri = str(params.uri)
    if "\x00" in uri or "\x00" in unquote(uri):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message="The resource URI contains a NUL character (raw or %00); no resource has one.",
            data={"uri": echo(uri)},
        )
    return uri


class ResourceFront:
    def __init__(
        self, server: TruloopMCP, changes: ResourceChanges, bus: ScopedBus, plugins: PluginViews | None = None
    ) -> None:
        self._server = server
        self.catalog = ResourceCatalog(server.deployment.services)
        self.plugins = plugins  # what plugin files serve (after the built-in resources)
        self.requests = PluginRequests(server)
        self._changes = changes
        self._bus = bus
        # handshake-era sessions -> (the caller's user id, the URIs it subscribed to)
        self._subscribed: weakref.WeakKeyDictionary[Any, tuple[str, set[str]]] = weakref.WeakKeyDictionary()
        self._listing = ListingSessions("resources", server)  # handshake-era sessions that listed resources
        self._listening = 0  # open 2026-07-28 listen streams
        self._listening_documents = 0  # ... of which subscribed to documents
        changes.subscribe(self.changed)
        changes.add_demand(self.wants_documents)

    async def scope(self, who: tuple[Caller, str] | None = None) -> ViewScope:
        """The current request's caller and what their profile's tools let them see (`who`: the caller and profile
        the request was admitted as, when it was)."""
        caller, profile = who if who is not None else await self._server.surface.resolve()
        toolset = self._server.front_door.toolset(profile)
        return ViewScope(caller, profile, {tool.name: tool.description for tool in toolset})

    # -- lists and reads -----------------------------------------------------------------------------------------

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> Any:
        scope = await self.scope()
        self._listing.remember(ctx)
        found: list[Any] = [*await self.catalog.resources(scope)]
        if self.plugins is not None:
            found.extend(self.plugins.resources(scope.profile))
        if self._server.apps.negotiated(ctx):
            found.extend(self._server.apps.resources(list(self._server.front_door.toolset(scope.profile))))
        entries, next_cursor = self._server.pager.page(found, params, "resources")
        resources = [_listed(entry) for entry in entries]
        return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)

    async def templates(self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> Any:
        scope = await self.scope()
        self._listing.remember(ctx)
        found: list[Any] = [*self.catalog.templates(scope)]
        if self.plugins is not None:
            found.extend(self.plugins.templates(scope.profile))
        entries, next_cursor = self._server.pager.page(found, params, "templates")
        templates = [
            types.ResourceTemplate(uri_template=e.uri_template or "", name=e.name, title=e.title,
                                   description=e.description, mime_type=e.mime_type)
            for e in entries
        ]  # fmt: skip
        return types.ListResourceTemplatesResult(resource_templates=templates, next_cursor=next_cursor)

    async def read(self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> Any:
        uri = checked_uri(params)
        async with admitted(self._server, ctx, RequestKind.READ, uri) as who:
            return await self._read(ctx, params, uri, who)

    async def _read(self, ctx: ServerRequestContext[Any, Any], params: Any, uri: str, who: tuple[Caller, str]) -> Any:
        app = self._server.apps.read(uri) if uri.startswith("ui://") else None
        if app is not None:
            return app
        scope = await self.scope(who)
        plugins = self.plugins
        found = plugins.find(uri, scope.profile) if plugins is not None else None
        if plugins is not None and found is not None:
            call = plugins.read(found, uri, await self.requests.context(ctx, params, who))
            contents = await self.requests.answer(found.spec.name, call)
            if isinstance(contents, list):
                return types.ReadResourceResult.model_validate({"contents": contents})
            return contents  # the InputRequiredResult of a question to a 2026-07-28 client
        try:
            body = await self.catalog.read(scope, uri)
        except UnknownResourceError as missing:
            raise MCPError(code=types.INVALID_PARAMS, message=str(missing), data={"uri": echo(uri)}) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=body.uri, mime_type=body.mime_type, text=body.text)]
        )

    # -- subscriptions -------------------------------------------------------------------------------------------

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> Any:
        """Record `uri` for this session, once it names something the caller may read now (refused with the error
        `resources/read` gives otherwise), up to `MAX_SUBSCRIPTIONS_PER_SESSION` URIs."""
        uri = checked_uri(params)
        scope = await self.scope()
        if self.plugins is None or self.plugins.find(uri, scope.profile) is None:
            try:
                await self.catalog.check(scope, uri)
            except UnknownResourceError as missing:
                raise MCPError(code=types.INVALID_PARAMS, message=str(missing), data={"uri": echo(uri)}) from None
        connection = connection_of(ctx.session)
        if connection is None:
            return types.EmptyResult()
        # from here on nothing awaits: the count checked is the count added to
        uris = self._subscribed.setdefault(connection, (scope.user_id, set()))[1]
        if uri not in uris and len(uris) >= MAX_SUBSCRIPTIONS_PER_SESSION:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=(
                    f"Subscription limit reached: at most {MAX_SUBSCRIPTIONS_PER_SESSION} resources per session; "
                    "resources/unsubscribe from one first."
                ),
                data={"uri": echo(uri), "limit": MAX_SUBSCRIPTIONS_PER_SESSION},
            )
        uris.add(uri)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> Any:
        connection = connection_of(ctx.session)
        if connection is not None and connection in self._subscribed:
            self._subscribed[connection][1].discard(str(params.uri))
        return types.EmptyResult()

    async def listen(self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams) -> Any:
        """`subscriptions/listen` (2026-07-28): the SDK's handler over this caller's view of the bus."""
        if self._listening >= MAX_LISTEN_STREAMS:
            raise MCPError(code=types.INTERNAL_ERROR, message="Subscription limit reached")
        scope = await self.scope()
        catalog = self.catalog

        plugins = self.plugins

        def may_see(uri: str, owner: str | None) -> bool:
            if owner is not None and owner != scope.user_id:
                return False
            return catalog.may_see(scope, uri) or (plugins is not None and plugins.find(uri, scope.profile) is not None)

        wanted = params.notifications.resource_subscriptions or []
        documents = any(uri.startswith(DOC_PREFIX) for uri in wanted)
        self._listening += 1
        self._listening_documents += documents
        try:
            return await ListenHandler(self._bus.view(may_see))(ctx, params)
        finally:
            self._listening -= 1
            self._listening_documents -= documents

    def wants_documents(self) -> bool:
        """Whether a session here is subscribed to a document (then the docs folder is watched)."""
        if self._listening_documents:
            return True
        return any(uri.startswith(DOC_PREFIX) for _, uris in list(self._subscribed.values()) for uri in uris)

    async def plugins_changed(self, updated: tuple[str, ...], *, listed: bool) -> None:
        """Plugin files changed: the sessions subscribed to a resource served by a new version hear it was updated;
        with `listed`, the resource list changed (sessions that listed resources, and 2026-07-28 listeners)."""
        await self.changed(ResourceChange(tuple(updated), listed=listed))
        if listed:
            await self._listing.tell(lambda connection: connection.send_resource_list_changed())

    async def changed(self, change: ResourceChange) -> None:
        """Tell the sessions subscribed to what changed (handshake era), and the listen streams (2026-07-28)."""
        for connection, (owner, uris) in list(self._subscribed.items()):
            if change.user_id is not None and change.user_id != owner:
                continue
            for uri in change.uris:
                if uri in uris:
                    try:
                        await connection.send_resource_updated(uri)
                    except Exception:
                        logger.debug("could not send resources/updated to a session", exc_info=True)
        for uri in change.uris:
            await self._bus.publish(ResourceUpdated(uri), change.user_id)
        if change.listed:
            await self._bus.publish(ResourcesListChanged())


def _listed(entry: Any) -> types.Resource:
    """A built-in resource's entry or a plugin's spec, as `resources/list` shows it."""
    if isinstance(entry, types.Resource):  # (an app: server/mcp/mcp_apps.py)
        return entry
    return types.Resource(
        uri=entry.uri,
        name=entry.name,
        title=entry.title,
        description=entry.description,
        mime_type=entry.mime_type,
        size=getattr(entry, "size", None),
    )
