"""Serving loops with clean shutdown on SIGINT, SIGTERM and (stdio) end of input."""

from __future__ import annotations

import logging
import signal
from typing import Any

import anyio

from server.settings import Settings

logger = logging.getLogger("truloop.runner")


def run(settings: Settings) -> None:
    if settings.transport == "stdio":
        anyio.run(_serve_stdio, settings)
    else:
        anyio.run(_serve_http, settings)


async def _until_signal(scope: anyio.CancelScope, on_signal: Any = None) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            logger.info("received %s, shutting down", signal.Signals(signum).name)
            if on_signal is not None:
                on_signal()
            else:
                scope.cancel()
            return


async def _serve_stdio(settings: Settings) -> None:
    from server.app import build_server
    from server.stdio import serve_stdio

    server = build_server(settings)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_signal, tg.cancel_scope)
        await serve_stdio(server)  # returns on end of input
        tg.cancel_scope.cancel()


async def _serve_http(settings: Settings) -> None:
    import uvicorn

    from server.http_app import build_http_app

    config = uvicorn.Config(
        build_http_app(settings), host=settings.host, port=settings.port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # we own the signals

    def stop() -> None:
        server.should_exit = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(_until_signal, tg.cancel_scope, stop)
        await server.serve()
        tg.cancel_scope.cancel()
