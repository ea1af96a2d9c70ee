"""The stdio server's lean front: a handshake-era session's plain messages answered before (and without) the SDK.

Importing the SDK's server is most of a plain server's start (docs/upstream-lazy-imports.md), and its per-message
path (a dispatcher task, memory streams, a context and two validations per request) is most of its per-call work.
This front reads stdin itself (`server.stdio.pipes`, every line checked by `server.stdio.line_check`) and answers:

- `initialize` (a plain handshake: `server.wire_forms.initialize_result`, what the SDK answers),
  `notifications/initialized` and `ping`;
- `tools/list` without a cursor, from the front door's list for this session;
- `tools/call` with plain params (`server.call_route.plain_call`: `name`, `arguments`, a `_meta` without a
  progress token or the 2026-07-28 envelope) of a tool that needs nothing from the client while it runs
  (`server.call_route.lean_may_take`: no device, no confirmation, no client model, not task-only), through the call
  route (`server.call_route.route_call`) like every other front, each call on a task
  of its own (`notifications/cancelled` cancels it, and it is never answered, as the SDK does), its outcome told
  as `notifications/message` by the same rules (`server.log_events`);
- `notifications/cancelled` for those calls.

Everything else (resources, prompts, completion, `logging/setLevel`, a tool that asks the client, a progress token,
a 2026-07-28 client, responses to the server's own requests) goes to the SDK's server loop, started on first need:
the SDK is imported then, and its connection is given this session's `initialize` (and `notifications/initialized`)
again first, its answer dropped, so both paths serve one session. What the session is (its conversation, log level,
whether it is told of list changes) is one `server.stdio.session.StdioSession`, shared by both; the front tells it
when plugins change the tools. A connection that does not open with a plain handshake goes to the SDK whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from pydantic_core import to_json

from server.mcp.call_route import lean_may_take, plain_call, route_call
from server.mcp.log_events import outcome_data, outcome_level
from server.mcp.pagination import Pager
from server.mcp.request_info import mcp_request_info
from server.mcp.wire_forms import (
    MODERN_META_PREFIX,
    call_result,
    initialize_result,
    negotiated_version,
)
from server.stdio.line_check import Line, LineChecker, Oversized
from server.stdio.pipes import Inbox, Outbox, open_stdio
from server.stdio.session import StdioSession

if TYPE_CHECKING:
    from server.runtime.composition import Deployment
    from server.speed.list_cache import ToolListCache
    from server.speed.sdk_link import SdkLink
    from toolsets.core.context import Caller
    from toolsets.extensions.plugins.changes import PluginChange
    from toolsets.front_door import FrontDoor
    from toolsets.pipeline.audit.masking import Masker

logger = logging.getLogger("truloop.stdio")

APPS_EXTENSION = "io.modelcontextprotocol/ui"  # (mcp.server.apps.EXTENSION_ID, without importing the SDK)
OFFERED_LINE_BYTES = 64 * 1024  # lines up to this size may be started as they are read (`StdioFront._offered`)
_INITIALIZE_KEYS = frozenset({"protocolVersion", "capabilities", "clientInfo", "_meta"})


class StdioFront:
    def __init__(self, deployment: Deployment, inbox: Inbox, outbox: Outbox, limit: int, lists: ToolListCache) -> None:
        from server import __version__

        self.deployment = deployment
        self.settings = deployment.settings
        self._version = __version__
        self._inbox = inbox
        self._outbox = outbox
        self.checker = LineChecker(limit)
        self.session = StdioSession(self.write)
        self._caller = deployment.default_caller()
        self._profile = self.settings.profile
        self._protocol: str | None = None  # the negotiated handshake version; None until a plain handshake
        self._initialize: dict[str, Any] | None = None  # its request, for the SDK's connection
        self._apps = False  # the client declared MCP Apps
        self._initialized = False
        self._calls: dict[Any, asyncio.Task[None]] = {}
        self._lists = lists  # the deployment's one `tools/list` cache, shared with the SDK's server behind this front
        self._pager = Pager(self.settings.page_size)
        self._masker: Masker | None = None
        self._sdk: SdkLink | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._stopping = False
        self._pending: list[bytes] = []  # messages written this turn of the event loop (`flush`)

    # -- the loop ----------------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Read no more input; answer what was read (for a short while), then end."""
        self._stopping = True
        self._inbox.close_intake()
        self.checker.hurry()

    async def serve(self) -> None:
        """Serve until input ends or `stop()`; the requests read by then are answered first."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                await self._read()
                await self.checker.drain(self._stopping)
            finally:
                for task in self._calls.values():
                    task.cancel()
                if self._sdk is not None:
                    self._sdk.close()
            self.flush()
            await self._outbox.drain()

    async def _read(self) -> None:
        checker, inbox, outbox = self.checker, self._inbox, self._outbox
        while not self._stopping:
            if outbox.backed_up:  # the client is not reading: neither are we
                await outbox.drain()
            await checker.room()
            line = await inbox.next_line(self._offered)
            if line is None:
                return
            data, error = checker.frame(line)
            if data is not None:
                try:
                    await self._route(data)
                except Exception:
                    logger.exception("stdin: a message could not be served")
                    self._internal_error(data.get("id") if "method" in data else None)
            elif error is not None:
                self.write(error)

    def _offered(self, line: Line) -> bool:
        """A line read while the reader waits for one: a plain `tools/call` the front runs itself is started here, as
        it is read (a turn of the event loop sooner); anything else is left to the reader (False)."""
        if (
            self._stopping
            or self._protocol is None
            or self._outbox.backed_up
            or not self.checker.has_room()
            or isinstance(line, Oversized)
            or len(line) > OFFERED_LINE_BYTES  # (a larger line is parsed once, by the reader)
        ):
            return False
        try:
            data, _ = self.checker.frame(line)
            if data is None or data.get("method") != "tools/call" or not _plain_request(data):
                return False
            return self._start_call(data)
        except Exception:  # the reader serves it again, and answers what it cannot
            logger.exception("stdin: a call could not be started as it was read")
            return False

    def write(self, message: dict[str, Any]) -> None:
        """Queue one message; what a turn of the event loop wrote goes out in one system call."""
        if not self._pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self._pending.append(to_json(message))

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            pending.append(b"")
            self._outbox.write(b"\n".join(pending))

    # -- what is answered here, and what goes to the SDK -------------------------------------------------------

    async def _route(self, data: dict[str, Any]) -> None:
        method = data.get("method")
        if self._protocol is None:
            if self._sdk is None and method == "initialize" and _plain_request(data) and _plain_initialize(data):
                await self._handshake(data)
            else:
                await self._forward(data)
            return
        if data.get("jsonrpc") != "2.0" or not isinstance(method, str):
            await self._forward(data)  # a response to the SDK's request, or no JSON-RPC message: the SDK's to judge
        elif "id" not in data:
            await self._notification(method, data)
        elif method == "tools/call" and _plain_request(data):
            await self._tools_call(data)
        elif (
            method == "tools/list"
            and not self._apps
            and _plain_request(data)
            and not (data.get("params") or {}).keys() - {"_meta"}
        ):
            await self._answer(data, self._tools_list)
        elif method == "ping" and _plain_request(data):
            await self._answer(data, _empty)
        else:
            await self._forward(data)

    async def _notification(self, method: str, data: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            params = data.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            task = self._calls.pop(request_id, None) if isinstance(request_id, str | int) else None
            if task is not None:
                self.checker.admit(data)  # not waited for at end of input
                task.cancel()
                return
        elif method == "notifications/initialized" and self._sdk is None:
            self._initialized = True
            return
        await self._forward(data)

    async def _handshake(self, data: dict[str, Any]) -> None:
        if self.checker.admit(data) is not None:  # cannot be: nothing is in flight before the first request
            return
        params = data["params"]
        self._initialize = data
        # a client that renders MCP Apps gets its tools/list from the SDK's path, which adds the apps' bindings
        self._apps = APPS_EXTENSION in (params["capabilities"].get("extensions") or {})
        self._protocol = negotiated_version(params.get("protocolVersion"))
        # the door and the caller ready before the answer: a client lists or calls right after it, and both need them
        await self.deployment.ready()
        _loaded()  # start-up is over: collected again from here on
        self._subscribe_to_tool_changes()
        self._reply(data["id"], initialize_result(params.get("protocolVersion"), self._version))
        self.flush()

    async def _answer(self, data: dict[str, Any], answer: Any) -> None:
        refusal = self.checker.admit(data)
        if refusal is not None:
            self.write(refusal)
            return
        self._reply(data["id"], await answer())

    def _internal_error(self, request_id: Any) -> None:
        """The answer to a request this server failed to serve (the details stay in its own log)."""
        if isinstance(request_id, str | int):
            self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "Internal error"}})
            self.checker.answered(request_id)

    def _reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})
        self.checker.answered(request_id)

    # -- tools -------------------------------------------------------------------------------------------------

    def _door(self) -> FrontDoor:
        return self.deployment.front_door

    def _context(self, request_id: Any = None, caller: Caller | None = None) -> Any:
        """A call's context (`caller`: in their zone and language; lists need neither)."""
        info = mcp_request_info(
            request_id, self.session.id, stdio=True, protocol_version=self._protocol, profile=self._profile
        )
        conversation = self.session.conversation
        return self._door().context_for(caller or self._caller, self._profile, request=info, conversation=conversation)

    async def _tools_list(self) -> dict[str, Any]:
        self.session.saw_tools()
        door = self._door()
        page, next_cursor = self._pager.page(await door.visible(self._context(), fixed_list=False), {}, "tools")
        return dict(self._lists.lean(page, next_cursor))

    async def _tools_call(self, data: dict[str, Any]) -> None:
        if not self._start_call(data):
            await self._forward(data)  # a server -> client request may be needed: the SDK's session asks it

    def _start_call(self, data: dict[str, Any]) -> bool:
        """A plain call's task started (or its refusal written); False: the call is the SDK's to serve."""
        call = plain_call(data.get("params"), progress=False)
        tool = self._door().toolset(self._profile).get(call[0]) if call is not None else None
        if call is None or not lean_may_take(tool):
            return False
        refusal = self.checker.admit(data)
        if refusal is not None:
            self.write(refusal)
            return True
        request_id = data["id"]
        self._calls[request_id] = asyncio.get_running_loop().create_task(self._run(request_id, *call))
        return True

    async def _run(self, request_id: Any, name: str, arguments: dict[str, Any]) -> None:
        try:
            self.session.saw_tools()
            self.session.heard_of()
            started = time.monotonic()
            door = self._door()
            ctx = self._context(request_id, self.deployment.caller_now() or await self.deployment.caller())
            outcome = await route_call(door, ctx, name, arguments, fixed_list=False, list_changed=self._list_changed)
            level = outcome_level(outcome)  # None: input required: the client is being asked, not told
            if level is not None and self.session.hears(level):  # (the masking made only for what is said)
                self.session.log(level, outcome_data(self._masking(), name, outcome, started))
            if self._calls.pop(request_id, None) is not None:
                self._reply(request_id, call_result(outcome))
                if not self._calls:  # the only call running (a client waiting on each answer): out now
                    self.flush()
        except asyncio.CancelledError:
            self.checker.answered(request_id)  # cancelled by the client, or at the end: never answered
            raise
        except Exception:
            logger.exception("tools/call %s could not be answered", name)
            if self._calls.pop(request_id, None) is not None:
                self._internal_error(request_id)

    async def _list_changed(self) -> None:
        self.session.notify("notifications/tools/list_changed")

    def _masking(self) -> Masker:
        if self._masker is None:
            from server.runtime.audit_log import known_secrets
            from toolsets.pipeline.audit.masking import Masker

            self._masker = Masker(known_secrets(self.settings))
        return self._masker

    def _subscribe_to_tool_changes(self) -> None:
        plugins = self.deployment.plugins
        if plugins is not None:
            plugins.changes.subscribe(self._plugins_changed)

    async def _plugins_changed(self, change: PluginChange) -> None:
        self.session.plugins_changed(change.tools, change.resources, change.prompts)

    # -- the SDK -----------------------------------------------------------------------------------------------

    async def _forward(self, data: dict[str, Any]) -> None:
        if self._sdk is None:
            self._attach()
        assert self._sdk is not None
        message, error = self.checker.validated(data)
        if message is not None:
            self._sdk.put(message)
        elif error is not None:
            self.write(error.model_dump(by_alias=True, exclude_unset=True, mode="json"))

    def _attach(self) -> None:
        """The SDK's server loop on this connection, from now on (imported now: collected after, not during)."""
        from server.speed.sdk_link import SdkLink

        gc.disable()
        try:
            handshake = self._protocol is not None
            server = self.deployment.mcp_server(stdio_session=self.session if handshake else None)
            self._sdk = SdkLink(server, self._outbox, self.checker)
            if handshake:
                assert self._initialize is not None
                self._sdk.replay(self._initialize, initialized=self._initialized)
        finally:
            gc.freeze()
            gc.enable()
        assert self._tg is not None
        self._tg.start_soon(self._sdk.run)


def _loaded() -> None:
    """What start-up loaded is kept out of the collector's way from here on (server/speed/frozen_start.py)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


async def _empty() -> dict[str, Any]:
    return {}


def _plain_request(data: dict[str, Any]) -> bool:
    """A JSON-RPC request whose params, if any, are an object with no 2026-07-28 envelope in its `_meta`."""
    if data.get("jsonrpc") != "2.0" or not isinstance(data.get("method"), str) or "id" not in data:
        return False
    if not data.keys() <= {"jsonrpc", "id", "method", "params"}:
        return False
    params = data.get("params")
    if params is None:
        return "params" not in data
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    if meta is None:
        return "_meta" not in params
    return isinstance(meta, dict) and not any(
        isinstance(key, str) and key.startswith(MODERN_META_PREFIX) for key in meta
    )


def _plain_initialize(data: dict[str, Any]) -> bool:
    """An `initialize` the SDK would accept as it is (else the SDK answers it, and serves the connection)."""
    params = data.get("params")
    if not isinstance(params, dict) or not params.keys() <= _INITIALIZE_KEYS:
        return False
    info, capabilities = params.get("clientInfo"), params.get("capabilities")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(capabilities, dict)
        and all(_plain_capability(value) for value in capabilities.values())
        and isinstance(info, dict)
        and info.keys() <= {"name", "version", "title"}
        and all(isinstance(info.get(key), str) for key in ("name", "version"))
        and isinstance(info.get("title", ""), str)
    )


def _plain_capability(value: Any) -> bool:
    """A client capability as clients declare them: an object of flags and objects."""
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(flag, bool | dict) for key, flag in value.items()
    )


@contextlib.asynccontextmanager
async def stdio_front(deployment: Deployment, limit: int) -> AsyncIterator[StdioFront]:
    """This process's stdin/stdout served by a `StdioFront`, while the context lasts."""
    async with open_stdio(limit, 0, 1) as (inbox, outbox):
        yield StdioFront(deployment, inbox, outbox, limit, deployment.tool_lists)
