"""`truloop-mcp [FLAGS]` (no subcommand): parse the server's flags, then serve on stdio, SSE or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
from collections.abc import Sequence

from server.cli.shared import (
    PROG,
    OneLineParser,
    add_setting_flags,
    configure_logging,
    fail,
    plain_help,
    settings_or_exit,
)

PRECEDENCE = """\
Flags win over environment variables, which win over defaults; an empty value
counts as unset. An MCP host starts the server itself: see README.md, "Add it
to a host".
"""


def environment_only_help() -> str:
    """The settings without a flag, for the end of --help."""
    from server.settings import shown_default, sources

    lines = ["environment variables without a flag:"]
    for name, source in sources().items():
        if source.flag is None and source.env is not None:
            text = plain_help(f"{source.help} (default: {shown_default(name)})").replace("%%", "%")
            lines.append(f"  {source.env}")
            lines += textwrap.wrap(text, width=78, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines) + "\n"


class ServerParser(OneLineParser):
    """The epilog lists every environment-only setting and the subcommands: written when help is shown, not on
    every start."""

    def format_help(self) -> str:
        if self.epilog is None:
            from server.cli.table import subcommands_help

            self.epilog = f"{environment_only_help()}\n{subcommands_help()}\n{PRECEDENCE}"
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    parser = ServerParser(
        prog=PROG,
        description="The truloop assistant's toolsets as an MCP server.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from server import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_setting_flags(parser)
    return parser


def run(argv: Sequence[str]) -> None:
    from server.runtime.cold_start import before_imports

    before_imports()  # the server's imports are next; see server/runtime/cold_start.py
    flags = vars(build_parser().parse_args(argv))
    flags.pop("version", None)
    settings = settings_or_exit(flags)
    from server.auth.secrets_guard import guard_secrets

    guard_secrets()  # the secrets now live only in `settings`, never in what a child or a neighbour can read
    configure_logging(settings.log_level)
    from server.runtime.plugin_catalog import refuse_without_sandbox

    refuse_without_sandbox(settings)
    if settings.transport == "stdio":
        from server.stdio.greeting import greet_terminal

        greet_terminal()
    from server.runtime.serving import run as serve

    try:
        serve(settings)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        fail(str(exc))
    except Exception as exc:
        logging.getLogger("truloop").debug("fatal error", exc_info=True)
        sys.stderr.write(f"{PROG}: fatal: {type(exc).__name__}: {exc} (run with --log-level DEBUG for details)\n")
        raise SystemExit(1) from None
    else:
        if settings.fast_paths and settings.transport == "stdio":
            from server.speed.frozen_start import leave

            leave(0)  # everything is closed: no module teardown
