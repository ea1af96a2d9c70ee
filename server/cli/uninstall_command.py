"""`truloop-mcp uninstall HOST`: take the `truloop` entry out of an MCP host's configuration file (the rest
stays); see server/cli/install_command.py."""

from __future__ import annotations

from collections.abc import Sequence


def run(argv: Sequence[str]) -> None:
    from server.cli.install_command import run_uninstall

    run_uninstall(argv)
