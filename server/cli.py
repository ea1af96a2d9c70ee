"""`truloop-mcp` / `python -m server`: parse flags, then serve on stdio, SSE or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
import typing
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from server.settings import Settings

PROG = "truloop-mcp"


class OneLineParser(argparse.ArgumentParser):
    """Bad flags exit 2 with one clear line, never a usage dump or a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# Third-party loggers that, at DEBUG, print whole messages (results with emails, phones, memories).
CHATTY_LOGGERS = ("sse_starlette", "mcp", "httpx", "httpcore", "uvicorn", "redis", "urllib3", "asyncio")


SUBCOMMANDS = """\
subcommands (run instead of the server):
  truloop-mcp users import FILE  import users from a JSON list or a CSV file
                                 with a header
  truloop-mcp notion sync        copy the pages shared with NOTION_TOKEN's
                                 integration into <docs>/notion/
  truloop-mcp db migrate|status  the store's schema (--database-url or SQLite)
  truloop-mcp db copy --from sqlite:PATH --to postgresql://...
                                 move an embedded store onto PostgreSQL
  truloop-mcp tools list         the --tools-dir plugins: versions, load errors
  truloop-mcp tools check FILE   validate a plugin file without serving it
  truloop-mcp call               answer tool calls (LangChain, OpenAI, Anthropic
                                 shapes) read from stdin, one JSON a line
  truloop-mcp audit tail|grep    read the audit log of tool calls, with filters
                                 by user, tool, status and time
  truloop-mcp canary status|promote|hold|rollback NAME
                                 canary rollouts of plugin tools (NAME.canary.py)
  (`truloop-mcp users --help`, `truloop-mcp notion --help` for their options)

Flags win over environment variables, which win over defaults; an empty value
counts as unset. An MCP host starts the server itself: see README.md, "Add it
to a host".
"""


def _plain(text: str) -> str:
    """Help text for argparse: no markdown marks, `%` escaped."""
    return text.replace("`", "").replace("*", "").replace("%", "%%")


def add_setting_flags(parser: argparse.ArgumentParser, only: Collection[str] | None = None) -> None:
    """One flag per setting that has one, as the settings model declares it. Values stay strings for the
    model to validate, and a flag not given is absent from the parsed namespace (so the environment counts)."""
    from server.settings import Settings, choices_of, shown_default, sources

    for name, source in sources().items():
        if source.flag is None or (only is not None and name not in only):
            continue
        field = Settings.model_fields[name]
        env = f" [{source.env}]" if source.env else ""
        help_text = _plain(f"{source.help} (default: {shown_default(name)}){env}")
        if field.annotation is bool:
            parser.add_argument(source.flag, dest=name, action="store_true", default=argparse.SUPPRESS, help=help_text)
            continue
        parser.add_argument(
            source.flag,
            dest=name,
            action="append" if typing.get_origin(field.annotation) is tuple else "store",
            metavar=source.metavar or "{" + ",".join(choices_of(field)) + "}",
            default=argparse.SUPPRESS,
            help=help_text,
        )


def environment_only_help() -> str:
    """The settings without a flag, for the end of --help."""
    from server.settings import shown_default, sources

    lines = ["environment variables without a flag:"]
    for name, source in sources().items():
        if source.flag is None and source.env is not None:
            text = _plain(f"{source.help} (default: {shown_default(name)})").replace("%%", "%")
            lines.append(f"  {source.env}")
            lines += textwrap.wrap(text, width=78, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines) + "\n"


class ServerParser(OneLineParser):
    """The epilog lists every environment-only setting: written when help is shown, not on every start."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = f"{environment_only_help()}\n{SUBCOMMANDS}"
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    parser = ServerParser(
        prog=PROG,
        description="The truloop assistant's toolsets as an MCP server.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_setting_flags(parser)
    return parser


def settings_or_exit(flags: Mapping[str, Any]) -> Settings:
    """The settings from these flags and the environment; a bad value ends the program with one line."""
    from pydantic import ValidationError

    from server.settings import load_settings

    try:
        return load_settings(flags)
    except ValidationError as exc:
        from server.settings_text import explain

        fail(explain(exc))


def fail(message: str) -> NoReturn:
    """One `truloop-mcp: error: ...` line on stderr, exit 2 (a bad flag or setting, not a crash)."""
    sys.stderr.write(f"{PROG}: error: {message}\n")
    raise SystemExit(2)


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if level == "DEBUG":  # our DEBUG never logs payloads; theirs does
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "audit":
        from server.audit_command import run as run_audit

        return run_audit(argv[1:])
    if argv and argv[0] == "canary":
        from server.canary_command import run as run_canary

        return run_canary(argv[1:])
    if argv and argv[0] == "tools":
        from server.tools_command import run as run_tools

        return run_tools(argv[1:])
    if argv and argv[0] == "call":
        from server.call_command import run as run_call

        return run_call(argv[1:])
    if argv and argv[0] in ("users", "notion", "db"):
        from server.commands import run as run_command

        return run_command(argv)
    from server.fast_start import before_imports

    before_imports()  # the server's imports are next; see server/fast_start.py
    settings = settings_or_exit(vars(build_parser().parse_args(argv)))
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
        fail(str(exc))
    except Exception as exc:
        logging.getLogger("truloop").debug("fatal error", exc_info=True)
        sys.stderr.write(f"{PROG}: fatal: {type(exc).__name__}: {exc} (run with --log-level DEBUG for details)\n")
        raise SystemExit(1) from None
