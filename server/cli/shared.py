"""What every `truloop-mcp` subcommand shares: the one-line parser, the settings' flags, the settings or a
one-line error, and stderr logging."""

from __future__ import annotations

import argparse
import logging
import re
import sys
import typing
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from server.settings import Settings

PROG = "truloop-mcp"
_EMPHASIS = re.compile(r"\*([^*\s][^*]*?)\*")  # *Section name* in help text; a lone `*` (a wildcard) stays


class OneLineParser(argparse.ArgumentParser):
    """Bad flags exit 2 with one clear line, never a usage dump or a traceback."""

    def __init__(self, *args: Any, error_prog: str | None = None, **kwargs: Any) -> None:
        """`error_prog`: the program an error line names, when not this parser's own `prog` (a subcommand's parser
        whose errors read as its command's)."""
        super().__init__(*args, **kwargs)
        self._error_prog = error_prog

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self._error_prog or self.prog}: error: {message} (see --help)\n")


# Third-party loggers that, at DEBUG, print whole messages (results with emails, phones, memories).
CHATTY_LOGGERS = ("sse_starlette", "mcp", "httpx", "httpcore", "uvicorn", "redis", "urllib3", "asyncio")


def plain_help(text: str) -> str:
    """Help text for argparse: no markdown marks, `%` escaped."""
    return _EMPHASIS.sub(r"\1", text.replace("`", "")).replace("%", "%%")


def add_setting_flags(parser: argparse.ArgumentParser, only: Collection[str] | None = None) -> None:
    """One flag per setting that has one, as the settings model declares it. Values stay strings for the
    model to validate, and a flag not given is absent from the parsed namespace (so the environment counts)."""
    from server.settings import Settings, choices_of, shown_default, sources

    for name, source in sources().items():
        if source.flag is None or (only is not None and name not in only):
            continue
        field = Settings.model_fields[name]
        env = f" [{source.env}]" if source.env else ""
        help_text = plain_help(f"{source.help} (default: {shown_default(name)}){env}")
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
