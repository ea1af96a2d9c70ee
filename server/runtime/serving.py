"""Serving loops with clean shutdown on SIGINT, SIGTERM and (stdio) end of input.

The SDK's transports on anyio's default loop and uvicorn's defaults; with `fast_paths` the speed paths of
`server.speed` (own stdio transport, uvloop, one write per HTTP response, frozen start-up objects)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc

from server.settings import Settings

logger = logging.getLogger("truloop.runner")

HARD_EXIT_SECONDS = 8.0
# HTTP: how long open streams and calls still running may hold a stop (SIGTERM ends the server within 3 s)
GRACEFUL_SECONDS = 2


def run(settings: Settings) -> None:
    from toolsets.infra.private_files import warn_if_loose

    _data_folder_made(settings.data_dir)
    warn_if_loose(settings.data_dir, (settings.audit_target,) if isinstance(settings.audit_target, Path) else ())

    if settings.database_url is not None or settings.redis_url is not None:
        _stores_answer(settings)
    if settings.transport == "stdio":
        anyio.run(_serve_stdio, settings)
        return
    options: dict[str, Any] = {}
    if settings.fast_paths:
        from server import speed

        options = speed.event_loop_options()
    anyio.run(_serve_http, settings, backend_options=options)


def _data_folder_made(folder: Path) -> None:
    """Exit now, naming the folder, when the data folder cannot be made: every call would fail otherwise. The
    settings check what they can without writing; some folders only refuse a real `mkdir` (`/proc/...`, and any
    folder for root, whom permission bits do not stop)."""
    from server.cli.shared import PROG
    from toolsets.infra.private_files import private_dir

    try:
        private_dir(folder)
    except OSError as exc:
        sys.stderr.write(
            f"{PROG}: error: cannot create the data folder {folder} (--data-dir / TRULOOP_DATA_DIR): "
            f"{exc.strerror or exc}; pass a folder this user can create and write, such as ~/.local/share/truloop\n"
        )
        raise SystemExit(1) from None


def _stores_answer(settings: Settings) -> None:
    """Exit now, naming the store, when the database or Redis the settings name cannot be reached."""
    from server.cli.shared import PROG
    from server.runtime.store_check import StoreUnreachableError, check_stores

    try:
        anyio.run(check_stores, settings)
    except StoreUnreachableError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(1) from None


def _started(settings: Settings) -> None:
    """The server is built: garbage is collected again from here on (server/runtime/cold_start.py)."""
    from server.runtime.cold_start import after_imports

    if settings.fast_paths:
        from server import speed

        speed.freeze_loaded()
    after_imports()


async def _until_signal(
    scope: anyio.CancelScope,
    on_signal: Any = None,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """The first SIGINT/SIGTERM asks for a graceful stop (`on_signal`, or cancelling `scope`); a second
    one cancels `scope` at once. Either way the process is gone within `HARD_EXIT_SECONDS`."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()  # from here on a signal is a graceful stop
        first = True
        async for signum in signals:
            logger.info("received %s, shutting down", signal.Signals(signum).name)
            if first:
                _exit_later(HARD_EXIT_SECONDS)
            if first and on_signal is not None:
                on_signal()
                first = False
                continue
            scope.cancel()
            return


def _exit_later(seconds: float) -> None:
    """A worker thread stuck in a system call (a read that never returns) would hold the interpreter's
    exit forever; past `seconds`, leave without it. Everything durable is committed per operation."""

    def leave() -> None:
        logger.warning("shutdown took longer than %.0f s (a worker thread is blocked); exiting now", seconds)
        logging.shutdown()
        os._exit(0)

    timer = threading.Timer(seconds, leave)
    timer.daemon = True
    timer.start()


async def _serve_stdio(settings: Settings) -> None:
    from server.runtime.composition import Deployment

    deployment = Deployment(settings, stdio_front=True)
    if settings.fast_paths:
        await _serve_stdio_front(settings, deployment)
        return
    from server.stdio.sdk_transport import serve_stdio, stdio_channel

    server = deployment.mcp_server()
    _started(settings)
    await _seed_demo(settings, deployment.services)
    async with (
        deployment,  # its one lifecycle: plugins loaded before the first request, reloaded while serving
        stdio_channel(settings.max_line_bytes) as channel,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_until_signal, tg.cancel_scope, channel.stop)
        await serve_stdio(server, channel)  # returns at end of input, or soon after a signal
        tg.cancel_scope.cancel()


async def _serve_stdio_front(settings: Settings, deployment: Any) -> None:
    """stdio with the speed paths: the lean front answers the plain messages, the SDK (loaded on first need) the
    rest (server/stdio/lean_front.py). Garbage is collected again once the front door is built."""
    from server.stdio.lean_front import stdio_front

    await _seed_demo(settings, deployment.services)
    async with (
        deployment,  # its one lifecycle: plugins loaded before the first request, reloaded while serving
        stdio_front(deployment, settings.max_line_bytes) as front,
        anyio.create_task_group() as tg,
    ):
        await tg.start(_until_signal, tg.cancel_scope, front.stop)  # before the first answer
        await front.serve()  # returns at end of input, or soon after a signal
        tg.cancel_scope.cancel()


async def _seed_demo(settings: Settings, services: Any) -> None:
    if settings.demo:
        from toolsets.assistant.demo import HOME_ZONE, seed_demo
        from toolsets.assistant.demo_store import not_seeded_note

        # the zone asked for (--timezone, TRULOOP_TIMEZONE), else the demo's own: never the machine's by accident
        zone = settings.timezone if "timezone" in settings.model_fields_set else HOME_ZONE
        if not await seed_demo(services, settings.user, zone):
            services.note_at_start(not_seeded_note(services.data_dir))


def _bind(host: str, port: int) -> socket.socket:
    """Bind before serving, so a taken port is one clear error instead of uvicorn's exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it Nagle's algorithm holds each response body back ~40 ms behind its headers.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def announce(address: tuple[str, int], stream: TextIO | None = None) -> None:
    """One line on stderr, whatever the log level: where the server listens (the real port after `--port 0`)."""
    from server.cli.shared import PROG
    from server.http.uvicorn_server import http_url

    stream = stream or sys.stderr
    stream.write(f"{PROG}: serving {http_url(address, '/mcp')} (SSE at /sse)\n")
    stream.flush()


async def _serve_http(settings: Settings) -> None:
    import uvicorn

    from server.http.asgi_app import build_http_app, http_deployment
    from server.http.connection_guard import ConnectionLimits
    from server.http.uvicorn_server import ReportingServer, parser_name

    sock = _bind(settings.host, settings.port)
    deployment = http_deployment(settings)
    app = build_http_app(settings, address=sock.getsockname()[:2], deployment=deployment)  # the real port (--port 0)
    _started(settings)
    await _seed_demo(settings, deployment.services)
    # uvicorn's httptools protocol when installed, else its h11 one, held to the header timeout and the
    # connection cap and refusing requests parsers could read differently (server/http/connection_guard.py)
    limits = ConnectionLimits.of(settings.header_timeout, settings.max_connections)
    if settings.fast_paths:
        from server import speed

        http: Any = speed.http_protocol(limits)  # with a response's headers and body in one write
    else:
        from server.sdk_compat import guarded_http_protocol

        http = guarded_http_protocol(limits)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        # uvicorn's access lines are INFO and its loggers stay at WARNING, so none was ever written, yet each
        # response still formatted the client address and path for one; and no `server: uvicorn` banner
        access_log=False,
        server_header=False,
        http=http,
    )
    config.load()
    logger.info(
        "HTTP on the %s event loop with the %s parser",
        type(asyncio.get_running_loop()).__module__.split(".")[0],
        parser_name(config.http_protocol_class),
    )
    server = ReportingServer(config, on_started=announce, own_signals=True)  # `_until_signal` handles them

    def stop() -> None:
        server.should_exit = True
        deployment.bridge.close_streams()  # open device streams would otherwise hold the shutdown

    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_signal, tg.cancel_scope, stop)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()
