"""MCP Apps (the `io.modelcontextprotocol/ui` extension) for the clients that negotiate it.

A client that declares the extension with the app MIME type (`extensions["io.modelcontextprotocol/ui"].mimeTypes`)
sees the bound tools' `_meta.ui.resourceUri` in `tools/list` and the apps in `resources/list`; every other client
sees exactly what it saw before. Results are the same for everyone: an app renders from the tool's own result
(`structuredContent`), and its text stays complete on its own. `resources/read` of an app's `ui://` URI answers
whoever asks (a host may read it before it renders).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.apps import Apps, client_supports_apps

from toolsets.views.app_views import APP_MIME_TYPE, APPS, AppCatalog

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from toolsets.core.tool import Tool

LEGACY_KEY = "ui/resourceUri"  # the flat `_meta` key of the extension's first drafts
# an app's resource: drawn in a border, and allowed no network at all (no domains in its CSP)
APP_RESOURCE_META: dict[str, Any] = {"ui": {"prefersBorder": True}}


class AppsExtension(Apps):
    """The SDK's MCP Apps extension, advertised with the app MIME type this server serves (its tools and resources
    are the front door's, listed by `AppFront`)."""

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


class AppFront:
    def __init__(self, server: TruloopMCP) -> None:
        self._server = server
        self.catalog = AppCatalog()
        self.extension = AppsExtension()  # for `MCPServer(extensions=[...])`

    @staticmethod
    def negotiated(request: ServerRequestContext[Any, Any]) -> bool:
        try:
            return client_supports_apps(request)
        except Exception:  # a request with no session's capabilities
            return False

    def tools(self, wire: dict[str, Any], tools: list[Tool]) -> dict[str, Any]:
        """`tools/list`'s wire result with each bound tool's `_meta.ui` (a copy: the kept result is not changed)."""
        from toolsets.profiles import app_of  # (composing the profiles: not before a stdio server's first answer)

        bound = {tool.name: app.uri for tool in tools if (app := app_of(tool)) is not None}
        if not bound:
            return wire
        listed = []
        for form in wire["tools"]:
            uri = bound.get(form["name"])
            if uri is not None:  # (and the flat key older hosts still read)
                form = {**form, "_meta": {**(form.get("_meta") or {}), "ui": {"resourceUri": uri}, LEGACY_KEY: uri}}
            listed.append(form)
        return {**wire, "tools": listed}

    def resources(self, tools: list[Tool]) -> list[types.Resource]:
        """The apps the caller's tools show, for `resources/list`."""
        from toolsets.profiles import app_of

        shown = {app.uri for tool in tools if (app := app_of(tool)) is not None}
        documents = self.catalog.documents
        return [
            types.Resource(
                uri=app.uri,
                name=app.name,
                title=app.title,
                description=app.description,
                mime_type=APP_MIME_TYPE,
                size=len(documents[app.uri].encode("utf-8")),
                _meta=APP_RESOURCE_META,
            )
            for app in APPS
            if app.uri in shown
        ]

    def read(self, uri: str) -> types.ReadResourceResult | None:
        """An app's HTML (None: `uri` names no app)."""
        text = self.catalog.documents.get(uri)
        if text is None:
            return None
        contents = types.TextResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=text, _meta=APP_RESOURCE_META)
        return types.ReadResourceResult(contents=[contents])
