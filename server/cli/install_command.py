"""`truloop-mcp install HOST` / `truloop-mcp uninstall HOST`: add this installation's stdio server to an MCP
host's configuration file (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, Gemini CLI, Codex), or
take it out again.

    truloop-mcp install HOST [--scope user|workspace] [--workspace DIR] [--print]
                             [--profile P] [--user ID] [--data-dir DIR] [--demo] [--env KEY=VALUE]...
                             [-- SERVER FLAGS...]
    truloop-mcp uninstall HOST [--scope user|workspace] [--workspace DIR]

The entry is named `truloop` and starts the absolute path of this installation's `truloop-mcp` (the console
script beside the running Python), so a host that does not share your shell's PATH finds it. `--profile`,
`--user`, `--data-dir` (made absolute) and `--demo` become the server's flags; any other server flag goes
after `--` as it would on the command line (give paths there absolute: a host starts the server in a folder
of its choosing). The flags are checked as the server would check them before anything is written.

The file is merged, never replaced: other servers and keys stay, the previous file is kept as `FILE.bak`, and
running the command again leaves one entry. A file that is not plain JSON is refused (exit 2) and left as it
is, but for hosts whose files take comments (Zed, Gemini CLI: edited in the text, comments kept) and Codex's
TOML (edited with tomlkit, comments kept). `--print` writes nothing and prints the entry under the host's key.
Where the files are: server/cli/hosts.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from server.cli.hosts import HOST_ALIASES, HOSTS, SERVER_NAME, Host, Scope
from server.cli.shared import PROG, OneLineParser, fail


def build_parser(action: str) -> argparse.ArgumentParser:
    installing = action == "install"
    parser = OneLineParser(
        prog=f"{PROG} {action}",
        description=(
            f"{'Add' if installing else 'Remove'} the `{SERVER_NAME}` stdio server "
            f"{'to' if installing else 'from'} an MCP host's configuration file (see docs/hosts.md)."
        ).replace("`", ""),
        epilog=(
            "Other server flags go after `--`, e.g. "
            f"{PROG} install cursor -- --tools-dir /abs/tools --confirm strict".replace("`", "")
            if installing
            else None
        ),
    )
    parser.add_argument(
        "host",
        type=lambda name: HOST_ALIASES.get(name, name),
        choices=list(HOSTS),
        metavar="HOST",
        help=f"one of {', '.join(HOSTS)} (also {', '.join(HOST_ALIASES)})",
    )
    parser.add_argument(
        "--scope",
        choices=("user", "workspace"),
        help="the host's user-wide file (default), or a workspace's ("
        + ", ".join(name for name, host in HOSTS.items() if "workspace" in host.scopes)
        + ")",
    )
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="the workspace folder for --scope workspace (default: the current folder; implies --scope workspace)",
    )
    if not installing:
        return parser
    parser.add_argument("--print", action="store_true", help="print the entry instead of writing the file")
    from toolsets.profile_names import PROFILE_NAMES

    parser.add_argument("--profile", choices=PROFILE_NAMES, help="the server's --profile")
    parser.add_argument("--user", metavar="ID", help="the server's --user (the identity on stdio)")
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="the server's --data-dir (made absolute)")
    parser.add_argument("--demo", action="store_true", help="the server's --demo (seed demo data into an empty store)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable the host sets for the server (repeatable), e.g. GOOGLE_MAPS_API_KEY=...",
    )
    return parser


def run(argv: Sequence[str]) -> None:
    argv = list(argv)
    ours, server_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    args = build_parser("install").parse_args(ours)
    host: Host = HOSTS[args.host]
    file, scope = _target(host, args)
    command, prefix = installed_command()
    flags = [*prefix, *_server_flags(args), *server_args]
    _check_server_flags(flags[len(prefix) :])
    entry = host.entry(command, flags, _environment(args.env))

    from server.cli.config_file import ConfigFileError, write
    from server.cli.config_forms import snippet, with_server

    if args.print:
        sys.stdout.write(snippet(host.form, host.key, SERVER_NAME, entry))
        sys.stderr.write(f"{PROG}: not written; this goes under {host.key!r} in {file}\n")
        return
    try:
        change = with_server(host.form, file, host.key, SERVER_NAME, entry)
        backup = write(change, new_mode=_new_mode(scope))
    except ConfigFileError as exc:
        fail(f"{exc} (`{PROG} install {host.name} --print` shows the entry to add by hand)")
    except OSError as exc:
        fail(f"{file}: cannot be written: {exc.strerror or exc}")
    before = (change.before or {}).get(host.key, {}).get(SERVER_NAME)
    if not change.changed:
        said = f"{SERVER_NAME!r} is already in {file} as given; nothing changed"
    else:
        said = f"{'replaced' if before is not None else 'added'} {SERVER_NAME!r} {'in' if before else 'to'} {file}"
        said += f" (the previous file is {backup})" if backup is not None else " (a new file)"
    sys.stdout.write(f"{PROG}: {said}\n  {' '.join([command, *flags])}\n{host.next_step}\n")


def run_uninstall(argv: Sequence[str]) -> None:
    args = build_parser("uninstall").parse_args(list(argv))
    host: Host = HOSTS[args.host]
    file, scope = _target(host, args)

    from server.cli.config_file import ConfigFileError, write
    from server.cli.config_forms import without_server

    try:
        change = without_server(host.form, file, host.key, SERVER_NAME)
        backup = write(change, new_mode=_new_mode(scope))
    except ConfigFileError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{file}: cannot be written: {exc.strerror or exc}")
    if change.changed:
        sys.stdout.write(f"{PROG}: removed {SERVER_NAME!r} from {file} (the previous file is {backup})\n")
    else:
        where = file if change.before is not None else f"{file} (no such file)"
        sys.stdout.write(f"{PROG}: no {SERVER_NAME!r} entry in {where}; nothing changed\n")


def installed_command() -> tuple[str, list[str]]:
    """This installation's `truloop-mcp`: the console script beside the running Python (not resolved through
    symlinks: a virtual environment's python is one), else that Python with `-m server`."""
    bin_dir = Path(os.path.abspath(sys.executable)).parent
    script = bin_dir / ("truloop-mcp.exe" if sys.platform == "win32" else "truloop-mcp")
    if script.is_file():
        return str(script), []
    return os.path.abspath(sys.executable), ["-m", "server"]


def _target(host: Host, args: argparse.Namespace) -> tuple[Path, Scope]:
    scope: Scope = args.scope or ("workspace" if args.workspace is not None else "user")
    if scope not in host.scopes:
        _refuse(f"{host.name} has no workspace scope; it reads only its user file")
    workspace = None
    if scope == "workspace":
        workspace = Path(os.path.abspath(args.workspace or Path.cwd()))
        if not workspace.is_dir():
            _refuse(f"--workspace {workspace}: no such folder")
    elif args.workspace is not None:
        _refuse("--workspace goes with --scope workspace (a server's --workspace goes after `--`)")
    return host.config_file(scope, env=os.environ, platform=sys.platform, workspace=workspace), scope


def _server_flags(args: argparse.Namespace) -> list[str]:
    flags: list[str] = []
    if args.profile:
        flags += ["--profile", args.profile]
    if args.user:
        flags += ["--user", args.user]
    if args.data_dir is not None:
        flags += ["--data-dir", os.path.abspath(args.data_dir.expanduser())]
    if args.demo:
        flags.append("--demo")
    return flags


def _check_server_flags(flags: list[str]) -> None:
    """Refuse what the server would refuse at start, now rather than in a host's log."""
    from server.cli.serve_command import build_parser as server_parser
    from server.cli.shared import settings_or_exit

    parsed = vars(server_parser().parse_args(flags))  # a bad flag: one line, exit 2
    parsed.pop("version", None)
    if parsed.get("transport", "stdio") != "stdio":
        _refuse("a host starts the server on stdio; for --transport http see docs/hosts.md, 'Over HTTP'")
    settings_or_exit(parsed)


def _environment(pairs: Sequence[str]) -> Mapping[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            _refuse(f"--env {pair!r}: expected KEY=VALUE")
        env[key] = value
    return env


def _new_mode(scope: Scope) -> int:
    return 0o600 if scope == "user" else 0o644  # a user file may hold secrets (--env); a workspace's is shared


def _refuse(message: str) -> NoReturn:
    fail(message)
