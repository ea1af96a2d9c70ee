"""`truloop-mcp call`: tool calls in, replies out, one JSON document a line (stdin -> stdout).

Each line is a call, a list of calls or an assistant message, in any shape `toolsets.interop` knows
(LangChain/LangGraph, OpenAI Chat Completions, OpenAI Responses, Anthropic Messages); its reply line has
the same framing and shape. A blank line is passed over; a line that is not JSON (or longer than
`--max-line-bytes`) gets an error line `{"error": {"code", "message", "line"}}` and the stream goes on.
Exit 0 at end of input.

The calls go through the same front door as an MCP call (server/runtime/composition.py): the profile's tools and
plugins, the gates (one conversation per `call` process), the audit log, the canary. Confirmation: a pipe
has nobody to ask, so destructive tools are cancelled unless the operator says the program that wrote the
calls approved them, with `--confirm auto` (or `--confirm off`, or TRULOOP_CONFIRM). Deferred tools reach
the user's device only with `--redis-url` (shared with the `truloop-mcp --transport http` the device is
connected to); otherwise they reply `no_route`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from server.cli.shared import PROG, OneLineParser, add_setting_flags, configure_logging, settings_or_exit

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.interop.runner import InteropRunner

CALL_SETTINGS = (
    "profile",
    "user",
    "timezone",
    "data_dir",
    "docs_dir",
    "confirm",
    "exposure",
    "gates",
    "tools_dir",
    "plugin_isolation",
    "plugin_network",
    "tool_authoring",
    "canary_key",
    "redis_url",
    "redis_prefix",
    "database_url",
    "deferred_timeout",
    "max_line_bytes",
    "audit_log",
    "audit_max_bytes",
    "audit_keep",
    "log_level",
)
SHAPES = ("openai-chat", "openai-responses", "anthropic", "langchain")

PIPE_NO_ROUTE = (
    "a pipe (`truloop-mcp call`) cannot ask the user, and reaches the device only through the Redis of a "
    "`truloop-mcp --transport http` the device is connected to: run it with --redis-url set to that Redis, "
    "or call the tool through an MCP host or the LangGraph adapter."
)
CHUNK = 256 * 1024
QUEUED_CHUNKS = 8  # chunks read ahead of the calls; past them, reading waits


EXAMPLE = """\
examples:
  echo '{"type":"tool_call","name":"get_day_of_week","args":{"date":"2026-03-10"}}' | truloop-mcp call
  truloop-mcp call --list-tools openai-chat   # the `tools=` to give a model, as one JSON line
"""


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=f"{PROG} call",
        description="Answer tool calls read from stdin, one JSON document a line (a call, a list of calls or an\n"
        "assistant message: LangChain, OpenAI Chat Completions, OpenAI Responses or Anthropic\n"
        "shapes); each reply line has the same shape.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--list-tools",
        choices=SHAPES,
        metavar="SHAPE",
        help=f"print the profile's tool definitions in SHAPE ({', '.join(SHAPES)}) as one JSON line, and exit",
    )
    add_setting_flags(parser, only=CALL_SETTINGS)
    return parser


def run(argv: Sequence[str]) -> None:
    """`argv` without the leading `call`."""
    flags = vars(_parser().parse_args(argv))
    shape = flags.pop("list_tools")
    settings = settings_or_exit(flags)
    from server.auth.secrets_guard import guard_secrets

    guard_secrets()  # plugins and workspace commands run here too: the secrets live only in `settings`
    configure_logging(settings.log_level)
    from server.runtime.plugin_catalog import refuse_without_sandbox

    refuse_without_sandbox(settings)
    try:
        if shape is not None:
            asyncio.run(list_tools(settings, shape, sys.stdout.buffer))
            return
        asyncio.run(serve_pipe(settings, sys.stdin.fileno(), sys.stdout.buffer))
        if settings.fast_paths:
            from server.speed.frozen_start import leave

            leave(0)  # everything is closed: no module teardown
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except BrokenPipeError:  # the reader went away (`... | head`): nothing more to say
        with contextlib.suppress(OSError):  # so the interpreter's last flush of stdout does not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None


async def list_tools(settings: Settings, shape: str, sink: IO[bytes]) -> None:
    """The tools the pipe answers (the profile's, plugins included), as the definitions a model is given."""
    from toolsets.interop.definitions import tool_definitions

    async with _runner(settings) as runner:
        definitions = tool_definitions(runner.toolset, shape)
    sink.write(json.dumps(definitions, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    sink.flush()


async def serve_pipe(settings: Settings, source_fd: int, sink: IO[bytes]) -> None:
    async with _runner(settings) as runner:
        number = 0
        async for line, more_ready in _lines(source_fd, settings.max_line_bytes):
            number += 1
            if line is not None and not line.strip():
                continue
            answer = await answer_line(runner, line, number, settings.max_line_bytes)
            sink.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            if not more_ready:  # flush when no line waits: replies go out in batches, yet none is held back
                sink.flush()
        sink.flush()


async def answer_line(runner: InteropRunner, line: bytes | None, number: int, limit: int) -> Any:
    from toolsets.core import safe_json

    if line is None:
        return _error("line_too_long", f"line {number} is longer than --max-line-bytes ({limit} bytes)", number)
    try:
        document = safe_json.loads(line)
    except safe_json.JsonDecodeError as exc:
        reason = str(exc).splitlines()[0][:160]
        return _error("invalid_json", f"line {number} is not UTF-8 JSON ({reason})", number)
    return await runner.reply(document)


PIPE_UNASKED = (
    "truloop-mcp call reads its calls from a pipe, where nobody can be asked; nothing was changed. If the program "
    "writing the calls has the user's approval, run truloop-mcp call --confirm auto."
)


def _error(code: str, message: str, number: int) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "line": number}}


@contextlib.asynccontextmanager
async def _runner(settings: Settings) -> AsyncIterator[InteropRunner]:
    """The runner of `--profile` for `--user`, on the deployment the server would build from these settings."""
    from server.runtime.in_process import in_process
    from toolsets.core.context import ConfirmPolicy
    from toolsets.interop.runner import NoDeviceRoute

    # nobody can be asked on a pipe: cancelled (strict) unless the operator chose a policy
    policy = settings.confirm if "confirm" in settings.model_fields_set else ConfirmPolicy.STRICT
    async with in_process(settings) as app:
        deferred = app.deferred if app.deferred is not None else NoDeviceRoute(PIPE_NO_ROUTE)
        yield app.runner(confirm_policy=policy, deferred=deferred, transport="cli", unasked=PIPE_UNASKED)


async def _lines(fd: int, limit: int) -> AsyncIterator[tuple[bytes | None, bool]]:
    """The lines of `fd` (None for one over `limit`), each with whether another is already waiting.

    A daemon thread reads raw chunks (so Ctrl-C never waits on a blocking read, and no buffered reader's lock
    is held at exit); at most `QUEUED_CHUNKS` wait unread, so a slow caller stops the reading.
    """
    from server.stdio.line_check import Line, LineSplitter, Oversized  # the stdio server's splitter

    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    room = threading.Semaphore(QUEUED_CHUNKS)

    def read() -> None:
        with contextlib.suppress(OSError):  # an unreadable stdin ends the input like EOF
            while True:
                room.acquire()
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
        with contextlib.suppress(RuntimeError):  # the loop is gone (Ctrl-C)
            loop.call_soon_threadsafe(chunks.put_nowait, b"")

    threading.Thread(target=read, name="truloop-call-stdin", daemon=True).start()
    splitter = LineSplitter(limit)
    while True:
        chunk = await chunks.get()
        lines: list[Line] = []
        if chunk:
            splitter.feed(chunk, lines.append)
        else:
            splitter.finish(lines.append)
        room.release()
        for index, line in enumerate(lines):
            yield None if isinstance(line, Oversized) else line, index + 1 < len(lines) or not chunks.empty()
        if not chunk:
            return
