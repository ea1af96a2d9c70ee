"""`truloop-mcp` / `python -m server`: a subcommand from server/cli/table.py or, without one, the server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from server.cli.shared import PROG

__all__ = ["PROG", "main"]  # PROG: the program's name in messages (server.runtime.serving's "serving ..." line)


def main(argv: Sequence[str] | None = None) -> None:
    import importlib

    from server.cli.table import command_for

    module, arguments = command_for(list(sys.argv[1:] if argv is None else argv))
    importlib.import_module(module).run(arguments)
