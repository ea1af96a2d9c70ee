"""`truloop-mcp canary status|promote|hold|rollback NAME`: the canary rollouts of plugin tools, for an operator.

    truloop-mcp canary status [NAME] [--json]   per tool and version: share, calls, errors, timeouts and p95 over
                                                 both windows (the last 100 calls, the last 30 minutes), the stage's
                                                 scheduled runs apart (awaiting approval?), last decision
    truloop-mcp canary promote NAME             one step up the ladder now (at 100%: the candidate becomes stable);
                                                 for a scheduled stage, the operator's approval
    truloop-mcp canary hold NAME                stop automatic promotion (automatic rollback still applies)
    truloop-mcp canary rollback NAME [--hard]   share 0 (soft); --hard also disables NAME.canary.py

The state and the samples are the server's (`--redis-url` for replicas, else `<data-dir>/canary/`), read live, so
status is current from any replica and from a process that serves nothing. With `--tools-dir`, status also shows a
candidate file that no server has loaded yet. Each change is an audit event (`canary_decision`). The changes that
act on the folder (promotion to 100%, hard rollback) need `--tools-dir` and are refused without it (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Collection, Sequence
from typing import Any, NoReturn

import anyio

from server.cli.shared import PROG, OneLineParser, add_setting_flags, configure_logging, fail, settings_or_exit
from server.settings import Settings
from toolsets.pipeline.canary import actions, scheduled
from toolsets.pipeline.canary.cause import cause
from toolsets.pipeline.canary.metrics import RunStats, ScheduledRuns, Stats, windows
from toolsets.pipeline.canary.rules import SCHEDULED_RULES, duration
from toolsets.pipeline.canary.state import CanaryState

FAILED = 1
# where the folder is and where its code may run (the sandbox with authoring): candidate files are imported
SETTINGS = {
    "data_dir", "redis_url", "tools_dir", "audit_log", "log_level", "plugin_isolation", "plugin_network",
    "tool_authoring", "canary_scheduled_gap", "database_url",
}  # fmt: skip
NOT_STARTED = "not started"  # a candidate file no server has loaded yet (status with --tools-dir)


class CanaryCommandError(Exception):
    pass


class NeedsToolsDir(Exception):  # noqa: N818 - a refusal: the change acts on files this command cannot see
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
            states, pending = anyio.run(_states, settings, name)
            if as_json:
                shown = [
                    {**s.model_dump(mode="json"), "started": s.tool not in pending, "cause": cause(s)} for s in states
                ]
                sys.stdout.write(json.dumps(shown, indent=2) + "\n")
            else:
                sys.stdout.write(status_table(states, pending) if states else _nothing(name))
            return
        state = anyio.run(_operate, settings, command, name, hard)
    except NeedsToolsDir as exc:
        fail(str(exc))
    except CanaryCommandError as exc:
        _fail(str(exc))
    sys.stdout.write(_summary(state) + "\n")


async def _states(settings: Settings, name: str | None) -> tuple[list[CanaryState], set[str]]:
    """Each rollout with its live windows (from the shared samples), plus, with `--tools-dir`, the candidate files
    no server has started a rollout for yet (their names in the second value)."""
    from server.runtime.canary_setup import open_canary_store

    store = open_canary_store(settings)
    try:
        states = []
        for state in await store.all():
            if name is not None and state.tool != name:
                continue
            candidate = windows(await store.samples(state.step_key()))
            stable = windows(await store.samples(state.stable_key()))
            gap = scheduled.gap_of(state, settings.canary_scheduled_gap)
            runs = await scheduled.read_runs(store, state, gap)
            live = {"metrics": {"stable": stable, "candidate": candidate}, "scheduled": runs}
            states.append(state.model_copy(update=live))
    finally:
        await store.aclose()
    pending: set[str] = set()
    if settings.tools_dir is not None:
        started = {(state.tool, state.candidate) for state in states}
        for found in await _folder_candidates(settings):
            if (name is None or found.tool == name) and (found.tool, found.candidate) not in started:
                states = [state for state in states if state.tool != found.tool] + [found]
                pending.add(found.tool)
    return sorted(states, key=lambda state: state.tool), pending


async def _folder_candidates(settings: Settings) -> list[CanaryState]:
    """The rollouts the folder's candidate files would start (imported to read their specs, never run)."""
    from server.runtime.plugin_catalog import plugin_catalog

    assert settings.tools_dir is not None
    catalog = plugin_catalog(settings)
    found = []
    async with catalog.running(watch=False, create=False):
        for tool, stable in catalog.versions().items():
            candidate = catalog.candidate(tool)
            if candidate is None:
                continue
            state = actions.start_beside(stable, candidate)
            found.append(state.model_copy(update={"metrics": {"stable": windows([]), "candidate": windows([])}}))
    return found


async def _operate(settings: Settings, command: str, name: str, hard: bool) -> CanaryState:
    from server.runtime.canary_setup import open_canary_store

    store = open_canary_store(settings)
    try:
        for _ in range(5):  # a server may write between our read and our write: read again
            current = await store.load(name)
            if current is None:
                raise CanaryCommandError(f"no canary rollout of {name!r} (none of its NAME.canary.py was served yet)")
            gap = scheduled.gap_of(current, settings.canary_scheduled_gap)
            runs = await scheduled.read_runs(store, current, gap)
            new = transition(current, command, hard, runs)
            if new.status in ("promoted", "disabled") and settings.tools_dir is None:
                change = "promotion to 100%" if new.status == "promoted" else "a hard rollback"
                raise NeedsToolsDir(
                    f"canary {command}: {change} changes the tools folder; pass --tools-dir DIR (nothing was changed)"
                )
            if await store.save(new, current.revision):
                break
        else:
            raise CanaryCommandError(f"the rollout of {name!r} kept changing while we wrote it; try again")
    finally:
        await store.aclose()
    _audit(settings, new, await _feedback(settings, new))
    if settings.tools_dir is not None:
        _apply_files(settings, new)
    return new


def transition(state: CanaryState, command: str, hard: bool, runs: ScheduledRuns | None = None) -> CanaryState:
    """The operator's change. A promotion of a stage that has scheduled runs is their approval (rule `manual`),
    its reason naming the evidence it was given on."""
    if state.status == "promoted":
        raise CanaryCommandError(f"{state.tool}: candidate {state.candidate} was already promoted to stable")
    if command == "promote":
        if state.status == "disabled":
            raise CanaryCommandError(
                f"{state.tool}: the candidate file was disabled (hard rollback); rename "
                f"{state.candidate_file or 'NAME.canary.py'}.disabled back, then promote"
            )
        if runs is not None and runs.candidate.runs and state.status in ("active", "held"):
            return actions.promote(state, _approval(state, runs), "operator", rule="manual")
        return actions.promote(state, "promoted by the operator", "operator")
    if command == "hold":
        if state.status in ("rolled_back", "disabled"):
            raise CanaryCommandError(f"{state.tool}: the candidate is rolled back; nothing to hold")
        return actions.hold(state, "held by the operator", "operator")
    if state.status == "disabled" or (state.status == "rolled_back" and not hard):
        raise CanaryCommandError(f"{state.tool}: already rolled back ({state.status})")
    return actions.rollback(state, "rolled back by the operator", "operator", hard=hard)


def _approval(state: CanaryState, runs: ScheduledRuns) -> str:
    evidence = (
        f"{runs.candidate.runs} scheduled runs ok at {state.share:g}% over {duration(runs.since_stage_s)}"
        if runs.awaiting_approval
        else f"before the stage's evidence was complete ({_runs_said(runs)})"
    )
    return f"approved by the operator: {evidence}"


def _runs_said(runs: ScheduledRuns) -> str:
    wait = f", {duration(runs.until_gap_s)} of the gap left" if runs.until_gap_s else ""
    return f"{runs.candidate.runs} scheduled runs, {runs.candidate.failures} failed{wait}"


async def _feedback(settings: Settings, state: CanaryState) -> list[dict[str, Any]]:
    """An operator's hold or rollback kept as feedback on the candidate, as the server keeps the rules' (its
    `tool_feedback` audit line returned, for `_audit`)."""
    from server.runtime.feedback_recorder import feedback_recorder
    from toolsets.infra.store.backend import open_backend

    lines: list[dict[str, Any]] = []
    backend = open_backend(settings.data_dir, settings.database_url)
    try:
        await feedback_recorder(settings, lambda: backend.feedback, lines.append).decided(state)
    finally:
        await backend.aclose()
    return lines


def _audit(settings: Settings, state: CanaryState, more: Sequence[dict[str, Any]] = ()) -> None:
    from server.runtime.audit_log import open_audit_log
    from toolsets.pipeline.canary.router import decision_event

    log = open_audit_log(settings.model_copy(update={"transport": "http"}))  # `-`: stdout, not stderr
    if log is not None:
        log.emit(decision_event(state))
        for line in more:
            log.emit(line)
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


def status_table(states: Sequence[CanaryState], pending: Collection[str] = ()) -> str:
    """Per rollout: its status and share, then one row per version with its calls, errors, timeouts and p95 over
    the last 100 calls and over the last 30 minutes, then the last decision."""
    lines: list[str] = []
    for state in states:
        ladder = "-".join(f"{rung:g}" for rung in state.ladder)
        runs = state.scheduled if state.tool not in pending else None
        if state.tool in pending:
            status = f"{NOT_STARTED} (no server has loaded {state.candidate_file} yet; it starts at {state.share:g}%)"
        else:
            waiting = ", awaiting approval" if runs is not None and runs.awaiting_approval else ""
            status = f"{state.status}{waiting}  candidate share {state.routed_share:g}%"
        lines.append(f"{state.tool}  {status} (ladder {ladder})")
        header = ("version", "route", "file", "share", *_WINDOW_HEADER, *(f"{h} 30m" for h in _WINDOW_HEADER))
        rows: list[tuple[str, ...]] = [header]
        for route, version, file, share in (
            ("stable", state.stable, state.stable_file, 100 - state.routed_share),
            ("canary", state.candidate, state.candidate_file, state.routed_share),
        ):
            measured = state.metrics.get("candidate" if route == "canary" else "stable")
            last, recent = (measured.last_calls, measured.last_minutes) if measured is not None else (Stats(), Stats())
            rows.append((version, route, file or "-", f"{share:g}%", *_window_cells(last), *_window_cells(recent)))
        lines += _aligned(rows)
        if runs is not None and _shows_scheduled(state, runs):
            lines += _scheduled_rows(state, runs)
        decision = state.decision
        if decision is not None and state.tool not in pending:
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(decision.at))
            lines.append(f"  last decision: {decision.action} ({decision.by}, {when}): {decision.reason}")
            why = cause(state)
            if why is not None:
                lines.append(f"  cause: {why}; failing inputs: `{PROG} tools feedback {state.tool}`")
        lines.append("")
    return "\n".join(lines)


_WINDOW_HEADER = ("calls", "errors", "timeouts", "p95 ms")


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _shows_scheduled(state: CanaryState, runs: ScheduledRuns) -> bool:
    """A rollout that scheduled runs take part in: runs at this stage, or a decision of theirs."""
    rule = state.decision.rule if state.decision is not None else None
    return bool(runs.candidate.runs or runs.stable.runs) or rule in SCHEDULED_RULES


def _scheduled_rows(state: CanaryState, runs: ScheduledRuns) -> list[str]:
    """The stage's scheduled runs, apart from the real-time windows: per version its runs, failures and last run,
    then how long the stage has run, what it still needs, or that it awaits the operator's approval."""
    started = _when(runs.stage_started)
    gap = "passed" if not runs.until_gap_s else f"{duration(runs.until_gap_s)} left"
    lines = [
        f"  scheduled runs at {state.share:g}% (stage started {started}, {duration(runs.since_stage_s)} ago; "
        f"gap {duration(runs.gap_s)}: {gap})"
    ]
    rows: list[tuple[str, ...]] = [("version", "route", "runs", "failures", "last run")]
    for route, version, measured in (
        ("stable", state.stable, runs.stable),
        ("canary", state.candidate, runs.candidate),
    ):
        rows.append((version, route, *_run_cells(measured)))
    lines += _aligned(rows)
    if runs.awaiting_approval:
        lines.append(f"  awaiting approval: {_runs_said(runs)}; approve with `{PROG} canary promote {state.tool}`")
    return lines


def _run_cells(measured: RunStats) -> tuple[str, str, str]:
    last = "-" if measured.last_run is None else _when(measured.last_run)
    return str(measured.runs), f"{measured.failures} ({measured.timeouts} timeouts)", last


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _window_cells(window: Stats) -> tuple[str, str, str, str]:
    return (
        str(window.calls),
        f"{window.errors} ({window.error_rate:.1%})",
        f"{window.timeouts} ({window.timeout_rate:.1%})",
        _ms(window.p95_ms),
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _nothing(name: str | None) -> str:
    about = f" of {name}" if name else ""
    return f"no canary rollout{about}: put NAME.canary.py (declaring the same tool) beside NAME.py in --tools-dir\n"


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG} canary: {message}\n")
    raise SystemExit(FAILED)
