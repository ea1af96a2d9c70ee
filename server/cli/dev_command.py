"""`truloop-mcp dev [--print] [SERVER FLAGS...]`: this server under the MCP Inspector's web UI, as `mcp dev` and
`fastmcp dev` do. It runs `npx -y @modelcontextprotocol/inspector@INSPECTOR_VERSION`, which starts this
installation's `truloop-mcp` on stdio with the given server flags (`--demo`, `--data-dir DIR`, `--user ID`, ...)
and prints the URL to open, with its session token. `--print` prints the command instead of running it.

The Inspector is pinned: `npx` without a version picks whatever the registry has, and on Node 20 that is a release
whose `--config` needs `--server` too (docs/hosts.md). 0.15.0 is the newest release that declares support for Node
20; every later one asks for Node 22.7.5 or newer.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from server.cli.shared import PROG, OneLineParser

INSPECTOR_VERSION = "0.15.0"
INSPECTOR = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
NODE_NEEDED = "Node.js 20 or newer"
UI_PORT = 6274  # the Inspector's own default (its CLIENT_PORT variable moves it)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=f"{PROG} dev",
        description=(
            f"Start this server under the MCP Inspector's web UI ({INSPECTOR}, through npx; needs {NODE_NEEDED}). "
            "Any other flag is the server's own (--demo, --data-dir DIR, --user ID, --profile P, ...). "
            "The Inspector prints the URL to open, with its session token."
        ),
        epilog=f"example: {PROG} dev --demo --data-dir /tmp/truloop-dev",
    )
    parser.add_argument("--print", action="store_true", help="print the command instead of running it")
    return parser


def inspector_command(npx: str, server_flags: Sequence[str]) -> list[str]:
    """The command that runs the Inspector on this installation's stdio server with `server_flags`."""
    from server.cli.install_command import installed_command

    command, prefix = installed_command()
    return [npx, "-y", INSPECTOR, command, *prefix, *server_flags]


def run(argv: Sequence[str]) -> None:
    args, server_flags = build_parser().parse_known_args(list(argv))
    flags = checked_server_flags(server_flags)
    npx = shutil.which("npx")
    if args.print:
        sys.stdout.write(shlex.join(inspector_command(npx or "npx", flags)) + "\n")
        return
    if npx is None:
        sys.stderr.write(
            f"{PROG}: error: npx is not on PATH: the MCP Inspector runs on {NODE_NEEDED} (https://nodejs.org); "
            f"install it, or see the command with `{PROG} dev --print`\n"
        )
        raise SystemExit(1)
    port = os.environ.get("CLIENT_PORT", str(UI_PORT))
    sys.stderr.write(
        f"{PROG} dev: starting the MCP Inspector {INSPECTOR_VERSION}; once it is up, open http://localhost:{port} "
        "with the session token it prints (Ctrl-C stops both)\n"
    )
    sys.stderr.flush()
    command = inspector_command(npx, flags)
    with subprocess.Popen(command) as child:
        try:
            code = child.wait()
        except KeyboardInterrupt:  # the Inspector got the same Ctrl-C: let it stop its server and itself
            code = child.wait()
    raise SystemExit(code)


def checked_server_flags(flags: Sequence[str]) -> list[str]:
    """The server's flags as the server would take them (a bad one: one line, exit 2), on stdio, with the data
    folder made absolute and always given: the Inspector starts the server with little of this environment
    (no XDG_DATA_HOME, no TRULOOP_*), which would otherwise move the store."""
    from server.cli.serve_command import build_parser as server_parser
    from server.cli.shared import fail, settings_or_exit

    parsed = vars(server_parser().parse_args(list(flags)))
    parsed.pop("version", None)
    if parsed.get("transport", "stdio") != "stdio":
        fail("dev starts the server on stdio; for HTTP run `truloop-mcp --transport http` and see docs/hosts.md")
    settings = settings_or_exit(parsed)
    folder = os.path.abspath(Path(settings.data_dir).expanduser())
    without_folder: list[str] = []
    skip = False
    for flag in flags:
        if skip:
            skip = False
        elif flag == "--data-dir":
            skip = True
        elif not flag.startswith("--data-dir="):
            without_folder.append(flag)
    return [*without_folder, "--data-dir", folder]
