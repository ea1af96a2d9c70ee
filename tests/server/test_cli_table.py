"""The subcommand table (server/cli/table.py): every row runs a module, and `truloop-mcp --help` lists every row."""

from __future__ import annotations

import importlib

from server.cli.serve_command import build_parser
from server.cli.table import SUBCOMMANDS, command_for


def test_every_row_names_a_module_that_runs_the_arguments_after_its_name() -> None:
    for command in SUBCOMMANDS:
        module, arguments = command_for([command.name, "--help"])
        assert arguments == ["--help"]
        assert callable(importlib.import_module(module).run), module
    assert command_for(["--port", "0"]) == ("server.cli.serve_command", ["--port", "0"])
    assert command_for([]) == ("server.cli.serve_command", [])


def test_the_servers_help_lists_every_row() -> None:
    text = build_parser().format_help()
    for command in SUBCOMMANDS:
        for arguments, _ in command.usage:
            assert f"  truloop-mcp {arguments}" in text
