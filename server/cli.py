"""`truloop-mcp` / `python -m server`: parse flags, then serve on stdio, SSE or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from pydantic import ValidationError

PROG = "truloop-mcp"


class OneLineParser(argparse.ArgumentParser):
    """Bad flags exit 2 with one clear line, never a usage dump or a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _env_number(name: str, default: int | float, parse: type[int] | type[float], example: str) -> Any:
    """A numeric environment variable, or `default`; a bad value ends the program with one clear line."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return parse(raw)
    except ValueError:
        shown = f"{default:g}" if parse is float else str(default)
        _fail(f"{name}: must be {example} such as {shown}; got {raw!r}")


# The flag (and variable) a setting comes from, so an error names what the user typed.
SETTING_NAMES = {
    "transport": "--transport",
    "host": "--host",
    "port": "--port",
    "profile": "--profile",
    "user": "--user / TRULOOP_USER",
    "timezone": "--timezone / TRULOOP_TIMEZONE",
    "data_dir": "--data-dir / TRULOOP_DATA_DIR",
    "docs_dir": "--docs / TRULOOP_DOCS_DIR",
    "redis_url": "--redis-url / REDIS_URL",
    "redis_prefix": "TRULOOP_REDIS_PREFIX",
    "deferred_timeout": "--deferred-timeout / TRULOOP_DEFERRED_TIMEOUT",
    "jwt_secret": "TRULOOP_JWT_SECRET",
    "jwt_issuer": "TRULOOP_JWT_ISSUER",
    "state_keys": "TRULOOP_STATE_KEYS",
    "allowed_hosts": "--allowed-host / TRULOOP_ALLOWED_HOSTS",
    "allowed_origins": "--allowed-origin / TRULOOP_ALLOWED_ORIGINS",
    "max_sessions_per_user": "--max-sessions-per-user / TRULOOP_MAX_SESSIONS_PER_USER",
    "max_device_streams_per_user": "--max-device-streams-per-user / TRULOOP_MAX_DEVICE_STREAMS_PER_USER",
    "max_line_bytes": "--max-line-bytes / TRULOOP_MAX_LINE_BYTES",
}

# Third-party loggers that, at DEBUG, print whole messages (results with emails, phones, memories).
CHATTY_LOGGERS = ("sse_starlette", "mcp", "httpx", "httpcore", "uvicorn", "redis", "urllib3", "asyncio")


EPILOG = """\
subcommands (run instead of the server):
  truloop-mcp users import FILE  import users from a JSON list or a CSV file
                                 with a header
  truloop-mcp notion sync        copy the pages shared with NOTION_TOKEN's
                                 integration into <docs>/notion/
  (`truloop-mcp users --help`, `truloop-mcp notion --help` for their options)

An MCP host starts the server itself: see README.md, "Add it to a host".
"""


def build_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = OneLineParser(
        prog=PROG,
        description="The truloop assistant's toolsets as an MCP server.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--transport",
        choices=["stdio", "sse", "http"],
        default="stdio",
        help="stdio (default); http = streamable HTTP at /mcp (the HTTP app also serves SSE); "
        "sse = the same HTTP app, for hosts that want the legacy /sse endpoint",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000; 0 picks a free one)")
    p.add_argument(
        "--profile",
        choices=["member", "notification-safe", "guest"],
        default="member",
        help="toolsets published on stdio and unauthenticated HTTP (with a JWT secret, the token's role decides)",
    )
    p.add_argument("--user", default=env("TRULOOP_USER", "local"), help="identity on stdio [TRULOOP_USER]")
    p.add_argument(
        "--timezone",
        default=env("TRULOOP_TIMEZONE"),
        help="the --user's IANA time zone [TRULOOP_TIMEZONE; default: this machine's]",
    )
    p.add_argument("--data-dir", default=env("TRULOOP_DATA_DIR"), help="embedded store [TRULOOP_DATA_DIR]")
    p.add_argument(
        "--docs",
        dest="docs_dir",
        default=env("TRULOOP_DOCS_DIR"),
        help="knowledge-base folder [TRULOOP_DOCS_DIR; default <data-dir>/docs]",
    )
    p.add_argument("--redis-url", default=env("REDIS_URL"), help="shared state for replicas [REDIS_URL]")
    p.add_argument(
        "--deferred-timeout",
        type=float,
        default=_env_number("TRULOOP_DEFERRED_TIMEOUT", 300.0, float, "a number of seconds"),
        help="seconds a deferred tool waits for the device (default 300) [TRULOOP_DEFERRED_TIMEOUT]",
    )
    p.add_argument("--demo", action="store_true", help="seed a small demo data set if the store is empty")
    p.add_argument(
        "--confirm",
        choices=["auto", "strict", "off"],
        default=env("TRULOOP_CONFIRM", "auto"),
        help="confirmation of destructive tools (default auto) [TRULOOP_CONFIRM]",
    )
    p.add_argument(
        "--allowed-host",
        dest="allowed_hosts",
        action="append",
        default=None,
        help="Host header to accept (repeatable, e.g. mcp.example.com:443) [TRULOOP_ALLOWED_HOSTS]",
    )
    p.add_argument(
        "--allowed-origin",
        dest="allowed_origins",
        action="append",
        default=None,
        help="Origin header to accept (repeatable) [TRULOOP_ALLOWED_ORIGINS]",
    )
    p.add_argument(
        "--max-sessions-per-user",
        type=int,
        default=_env_number("TRULOOP_MAX_SESSIONS_PER_USER", 64, int, "a whole number"),
        help="open MCP sessions (streamable HTTP + SSE) one user may hold; past it 429 (default 64) "
        "[TRULOOP_MAX_SESSIONS_PER_USER]",
    )
    p.add_argument(
        "--max-device-streams-per-user",
        type=int,
        default=_env_number("TRULOOP_MAX_DEVICE_STREAMS_PER_USER", 8, int, "a whole number"),
        help="open device streams one user may hold; past it 429 (default 8) [TRULOOP_MAX_DEVICE_STREAMS_PER_USER]",
    )
    p.add_argument(
        "--max-line-bytes",
        type=int,
        default=_env_number("TRULOOP_MAX_LINE_BYTES", 16 * 1024 * 1024, int, "a whole number"),
        help="stdio: longest accepted line; longer ones are refused while read (default 16 MiB) "
        "[TRULOOP_MAX_LINE_BYTES]",
    )
    p.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=env("TRULOOP_LOG_LEVEL", "WARNING"),
        help="stderr log level (default WARNING)",
    )
    return p


def settings_from_args(args: argparse.Namespace) -> Any:
    from server.settings import Settings

    values: dict[str, Any] = {
        "transport": args.transport,
        "host": args.host,
        "port": args.port,
        "profile": args.profile,
        "user": args.user,
        "demo": args.demo,
        "confirm": args.confirm,
        "log_level": args.log_level,
        "redis_url": args.redis_url or None,
        "redis_prefix": os.environ.get("TRULOOP_REDIS_PREFIX") or "truloop:",
        "deferred_timeout": args.deferred_timeout,
        "jwt_secret": os.environ.get("TRULOOP_JWT_SECRET") or None,
        "jwt_issuer": os.environ.get("TRULOOP_JWT_ISSUER") or None,
        "state_keys": _csv(os.environ.get("TRULOOP_STATE_KEYS")),
        "allowed_hosts": tuple(args.allowed_hosts or _csv(os.environ.get("TRULOOP_ALLOWED_HOSTS"))),
        "allowed_origins": tuple(args.allowed_origins or _csv(os.environ.get("TRULOOP_ALLOWED_ORIGINS"))),
        "max_sessions_per_user": args.max_sessions_per_user,
        "max_device_streams_per_user": args.max_device_streams_per_user,
        "max_line_bytes": args.max_line_bytes,
    }
    for key in ("timezone", "data_dir", "docs_dir"):
        if getattr(args, key):
            values[key] = getattr(args, key)
    return Settings(**values)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    raise SystemExit(2)


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if level == "DEBUG":  # our DEBUG never logs payloads; theirs does
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("users", "notion"):
        from server.commands import run as run_command

        return run_command(argv)
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        where = SETTING_NAMES.get(field, field)
        _fail(f"{where + ': ' if where else ''}{first['msg'].removeprefix('Value error, ')}")
    configure_logging(settings.log_level)
    if settings.transport == "stdio":
        from server.greeting import greet_terminal

        greet_terminal()
    from server.runner import run

    try:
        run(settings)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        _fail(str(exc))
    except Exception as exc:
        logging.getLogger("truloop").debug("fatal error", exc_info=True)
        sys.stderr.write(f"{PROG}: fatal: {type(exc).__name__}: {exc} (run with --log-level DEBUG for details)\n")
        raise SystemExit(1) from None
