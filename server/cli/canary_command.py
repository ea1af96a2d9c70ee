"""`truloop-mcp canary status|promote|hold|rollback NAME`: the canary rollouts of plugin tools, for an operator.

    truloop-mcp canary status [NAME] [--json]   per tool: versions, share, samples, rates, p95, last decision
    truloop-mcp canary promote NAME             one step up the ladder now (at 100%: the candidate becomes stable)
    truloop-mcp canary hold NAME                stop automatic promotion (automatic rollback still applies)
    truloop-mcp canary rollback NAME [--hard]   share 0 (soft); --hard also disables NAME.canary.py

The state is the server's (`--redis-url` for replicas, else `<data-dir>/canary/state.json`); each change is an
audit event (`canary_decision`). With `--tools-dir`, promotion to 100% and hard rollback change the folder here at
once; a running server also applies them at its next call of the tool.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

import anyio

from server.cli.shared import PROG, OneLineParser, add_setting_flags, configure_logging, settings_or_exit
from server.settings import Settings
from toolsets.pipeline.canary import actions
from toolsets.pipeline.canary.metrics import Stats
from toolsets.pipeline.canary.state import CanaryState

FAILED = 1
SETTINGS = {"data_dir", "redis_url", "tools_dir", "audit_log", "log_level"}


class CanaryCommandError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=f"{PROG} canary", description="Canary rollouts of plugin tools (NAME.canary.py).")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    status = commands.add_parser("status", help="per tool: versions, share, samples, rates, p95, last decision")
    status.add_argument("name", nargs="?", metavar="NAME", help="only this tool")
    status.add_argument("--json", action="store_true", help="the states as JSON instead of a table")
    add_setting_flags(status, only=SETTINGS)
    for action, text in (
        ("promote", "move the candidate one step up its ladder now (at 100%%, it becomes the stable file)"),
        ("hold", "stop automatic promotion of the candidate (automatic rollback still applies)"),
        ("rollback", "route no call to the candidate (soft); --hard also disables NAME.canary.py"),
    ):
        command = commands.add_parser(action, help=text)
        command.add_argument("name", metavar="NAME", help="the tool's name")
        if action == "rollback":
            command.add_argument("--hard", action="store_true", help="also rename NAME.canary.py to *.disabled")
        add_setting_flags(command, only=SETTINGS)
    return parser


def run(argv: Sequence[str]) -> None:
    args = vars(build_parser().parse_args(list(argv)))
    command, name = args.pop("command"), args.pop("name", None)
    as_json, hard = args.pop("json", False), args.pop("hard", False)
    settings = settings_or_exit(args)
    configure_logging("ERROR" if settings.log_level == "WARNING" else settings.log_level)
    try:
        if command == "status":
            states = anyio.run(_states, settings, name)
            if as_json:
                sys.stdout.write(json.dumps([s.model_dump(mode="json") for s in states], indent=2) + "\n")
            else:
                sys.stdout.write(status_table(states) if states else _nothing(name))
            return
        state = anyio.run(_operate, settings, command, name, hard)
    except CanaryCommandError as exc:
        _fail(str(exc))
    sys.stdout.write(_summary(state) + "\n")


async def _states(settings: Settings, name: str | None) -> list[CanaryState]:
    from server.canary_setup import open_canary_store

    store = open_canary_store(settings)
    try:
        states = await store.all()
    finally:
        await store.aclose()
    return [state for state in states if name is None or state.tool == name]


async def _operate(settings: Settings, command: str, name: str, hard: bool) -> CanaryState:
    from server.canary_setup import open_canary_store

    store = open_canary_store(settings)
    try:
        for _ in range(5):  # a server may write between our read and our write: read again
            current = await store.load(name)
            if current is None:
                raise CanaryCommandError(f"no canary rollout of {name!r} (none of its NAME.canary.py was served yet)")
            new = transition(current, command, hard)
            if await store.save(new, current.revision):
                break
        else:
            raise CanaryCommandError(f"the rollout of {name!r} kept changing while we wrote it; try again")
    finally:
        await store.aclose()
    _audit(settings, new)
    if settings.tools_dir is not None:
        _apply_files(settings, new)
    return new


def transition(state: CanaryState, command: str, hard: bool) -> CanaryState:
    if state.status == "promoted":
        raise CanaryCommandError(f"{state.tool}: candidate {state.candidate} was already promoted to stable")
    if command == "promote":
        if state.status == "disabled":
            raise CanaryCommandError(
                f"{state.tool}: the candidate file was disabled (hard rollback); rename "
                f"{state.candidate_file or 'NAME.canary.py'}.disabled back, then promote"
            )
        return actions.promote(state, "promoted by the operator", "operator")
    if command == "hold":
        if state.status in ("rolled_back", "disabled"):
            raise CanaryCommandError(f"{state.tool}: the candidate is rolled back; nothing to hold")
        return actions.hold(state, "held by the operator", "operator")
    if state.status == "disabled" or (state.status == "rolled_back" and not hard):
        raise CanaryCommandError(f"{state.tool}: already rolled back ({state.status})")
    return actions.rollback(state, "rolled back by the operator", "operator", hard=hard)


def _audit(settings: Settings, state: CanaryState) -> None:
    from server.audit_log import open_audit_log
    from toolsets.pipeline.canary.router import decision_event

    log = open_audit_log(settings.model_copy(update={"transport": "http"}))  # `-`: stdout, not stderr
    if log is not None:
        log.emit(decision_event(state))
        log.flush()


def _apply_files(settings: Settings, state: CanaryState) -> None:
    from toolsets.pipeline.canary import files

    assert settings.tools_dir is not None
    if state.candidate_file is None or state.status not in ("promoted", "disabled"):
        return
    candidate = settings.tools_dir / state.candidate_file
    stable = settings.tools_dir / state.stable_file if state.stable_file is not None else None
    if files.apply(state.status, stable, candidate, state.candidate) is None:
        sys.stderr.write(f"{PROG} canary: {candidate.name} is not as the rollout found it; the folder is unchanged\n")


def _summary(state: CanaryState) -> str:
    decision = state.decision
    said = f": {decision.reason}" if decision is not None else ""
    return f"{state.tool}: {state.status}, candidate {state.candidate} at {state.routed_share:g}%{said}"


def status_table(states: Sequence[CanaryState]) -> str:
    lines: list[str] = []
    for state in states:
        ladder = "-".join(f"{rung:g}" for rung in state.ladder)
        lines.append(f"{state.tool}  {state.status}  candidate share {state.routed_share:g}% (ladder {ladder})")
        header = ("version", "route", "file", "share", "calls", "calls 30m", "errors", "timeouts", "p95 ms", "p99 ms")
        rows: list[tuple[str, ...]] = [header]
        for route, version, file, share in (
            ("stable", state.stable, state.stable_file, 100 - state.routed_share),
            ("canary", state.candidate, state.candidate_file, state.routed_share),
        ):
            windows = state.metrics.get("candidate" if route == "canary" else "stable")
            last, recent = (windows.last_calls, windows.last_minutes) if windows is not None else (Stats(), Stats())
            rows.append(
                (
                    version,
                    route,
                    file or "-",
                    f"{share:g}%",
                    str(last.calls),
                    str(recent.calls),
                    f"{last.error_rate:.1%}",
                    f"{last.timeout_rate:.1%}",
                    _ms(last.p95_ms),
                    _ms(last.p99_ms),
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines += [
            "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        decision = state.decision
        if decision is not None:
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(decision.at))
            lines.append(f"  last decision: {decision.action} ({decision.by}, {when}): {decision.reason}")
        lines.append("")
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _nothing(name: str | None) -> str:
    about = f" of {name}" if name else ""
    return f"no canary rollout{about}: put NAME.canary.py (declaring the same tool) beside NAME.py in --tools-dir\n"


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG} canary: {message}\n")
    raise SystemExit(FAILED)
