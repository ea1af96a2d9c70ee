"""What the operator subcommands (`users`, `notion`, `db`) share: their parser's shape, the store flags they
take, the store they open, and one error line with an exit code for what went wrong."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from server.cli.shared import PROG, OneLineParser, settings_or_exit

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.services import Services

STORE_SETTINGS = ("data_dir", "docs_dir", "database_url")  # the server's flags the subcommands take too


class CommandError(Exception):
    """Something the operator can fix (a file, a URL, a schema): one error line, exit 2."""


def operator_parser(group: str, help: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """`truloop-mcp GROUP ACTION ...` as a parser of the whole command line (so a flag no action knows is
    reported by `truloop-mcp: error: ...`), and the subparsers to add GROUP's actions to."""
    parser = OneLineParser(prog=PROG)
    groups = parser.add_subparsers(dest="group", required=True)
    return parser, groups.add_parser(group, help=help).add_subparsers(dest="action", required=True)


def parse(parser: argparse.ArgumentParser, group: str, argv: Sequence[str]) -> tuple[argparse.Namespace, Settings]:
    """The arguments after `truloop-mcp GROUP`, and the settings from their store flags and the environment."""
    args = parser.parse_args([group, *argv])
    return args, settings_or_exit({name: getattr(args, name) for name in STORE_SETTINGS if hasattr(args, name)})


def store_services(settings: Settings) -> Services:
    from toolsets.infra.store.backend import open_backend
    from toolsets.services import Services

    return Services(
        backend=open_backend(settings.data_dir, settings.database_url),
        data_dir=settings.data_dir,
        docs_dir=settings.resolved_docs_dir,
        keys=settings.upstream_keys,
    )


def reporting_failures(action: Callable[[], None]) -> None:
    """Run `action`; a CommandError exits 2 and any other failure (an upstream or the store) exits 1, each
    with one error line and no traceback."""
    try:
        action()
    except CommandError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(2) from None
    except Exception as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(1) from None
