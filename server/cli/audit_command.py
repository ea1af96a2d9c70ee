"""`truloop-mcp audit tail|grep`: read the audit log (and its rotated files) with filters, for an operator.

    truloop-mcp audit tail [-n 20] [-f] [--user ID] [--tool NAME] [--status S] [--since 1h] [--format text]
    truloop-mcp audit grep PATTERN [-i] [the same filters]

Lines are printed as they are stored (JSON), or one short line each with `--format text`. The log is
the one the server writes with the same `--audit-log` / `--data-dir` (or their variables).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO, get_args

from server.cli.shared import PROG, OneLineParser, add_setting_flags, fail, settings_or_exit
from toolsets.pipeline.audit.record import Status
from toolsets.pipeline.audit.writer import log_files

AUDIT_SETTINGS = ("data_dir", "audit_log")  # the settings that say where the log is
STATUSES: tuple[str, ...] = get_args(Status)
EVENTS = ("tool_call", "tool_result", "request")
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
FOLLOW_POLL_SECONDS = 0.25


class AuditCommandError(Exception):
    pass


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """`30s`, `15m`, `2h`, `7d` (ago), an RFC 3339 time, or a date (midnight UTC); naive times are UTC."""
    relative = _RELATIVE.match(text.strip())
    if relative:
        return (now or datetime.now(UTC)) - timedelta(seconds=float(relative[1]) * _UNITS[relative[2]])
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time; use 15m, 2h, 7d, 2026-03-10 or 2026-03-10T09:00:00+09:00"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Filters:
    user: str | None = None
    tool: str | None = None
    status: str | None = None
    event: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    pattern: re.Pattern[str] | None = None

    def accepts(self, raw: str, record: dict[str, Any]) -> bool:
        if self.user is not None and record.get("user_id") != self.user:
            return False
        if self.tool is not None and record.get("tool_name") != self.tool:
            return False
        if self.status is not None and record.get("status") != self.status:
            return False
        if self.event is not None and record.get("event") != self.event:
            return False
        if self.since is not None or self.until is not None:
            moment = _moment(record)
            if moment is None:
                return False
            if self.since is not None and moment < self.since:
                return False
            if self.until is not None and moment > self.until:
                return False
        return self.pattern is None or self.pattern.search(raw) is not None


def _moment(record: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(record["ts"]))
    except (KeyError, ValueError):
        return None


def records(lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each line that holds a JSON object, with its object (a torn last line is skipped)."""
    for line in lines:
        raw = line.rstrip("\n")
        if not raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield raw, record


def read_lines(path: Path) -> Iterator[str]:
    for file in log_files(path):
        try:
            with file.open(encoding="utf-8", errors="replace") as handle:
                yield from handle
        except FileNotFoundError:  # rotated away while we read
            continue


def as_text(record: dict[str, Any]) -> str:
    """One short line: time, event, user, tool, outcome, latency, call id (a canary decision: time, event, the
    tool and its candidate version, the action and its share change, who and by which rule, and why)."""
    if record.get("event") == "canary_decision":
        return _decision_text(record)
    outcome = record.get("status") or "-"
    if record.get("error_code"):
        outcome += f"/{record['error_code']}"
    if record.get("deferred_route"):
        outcome += f" via {record['deferred_route']}"
    latency = record.get("latency_ms")
    took = f"{latency:.1f}ms" if isinstance(latency, int | float) else "-"
    return (
        f"{record.get('ts', '?')}  {record.get('event', '?'):<11}  {record.get('user_id', '?')}  "
        f"{record.get('tool_name', '?')}{_target(record)}  {outcome}  {took}  {record.get('call_id', '')}"
    )


def _target(record: dict[str, Any]) -> str:
    """What a `request` line's read or prompt named."""
    target = record.get("target")
    return f" {target}" if target else ""


def _decision_text(record: dict[str, Any]) -> str:
    action = str(record.get("action", "?"))
    if record.get("rollback"):
        action += f" ({record['rollback']})"
    shares = f"{_share(record.get('share_from'))}->{_share(record.get('share_to'))}"
    rule = f", rule {record['rule']}" if record.get("rule") else ""
    return (
        f"{record.get('ts', '?')}  canary_decision  {record.get('tool_name', '?')}@{record.get('tool_version', '?')}"
        f"  {action} {shares}  {record.get('canary_status', '?')}  by {record.get('by', '?')}{rule}"
        f": {record.get('reason', '')}"
    )


def _share(value: Any) -> str:
    return f"{value:g}%" if isinstance(value, int | float) else "?"


def tail(path: Path, filters: Filters, count: int, out: Callable[[str, dict[str, Any]], None]) -> int:
    kept: deque[tuple[str, dict[str, Any]]] = deque(maxlen=count)
    for raw, record in records(read_lines(path)):
        if filters.accepts(raw, record):
            kept.append((raw, record))
    for raw, record in kept:
        out(raw, record)
    return len(kept)


def grep(path: Path, filters: Filters, out: Callable[[str, dict[str, Any]], None]) -> int:
    found = 0
    for raw, record in records(read_lines(path)):
        if filters.accepts(raw, record):
            out(raw, record)
            found += 1
    return found


def follow(path: Path, filters: Filters, out: Callable[[str, dict[str, Any]], None], *, from_end: bool) -> None:
    """New lines as the server appends them, across rotations, until interrupted. `from_end`: the file there
    now was printed already (by `tail`); a file that appears later is read from its start."""
    handle: TextIO | None = None
    identity: tuple[int, int] | None = None
    buffer = ""

    def drain() -> bool:
        nonlocal buffer
        assert handle is not None
        chunk = handle.read()
        if not chunk:
            return False
        buffer += chunk
        *complete, buffer = buffer.split("\n")
        for raw, record in records(complete):
            if filters.accepts(raw, record):
                out(raw, record)
        return True

    while True:
        if handle is None and path.exists():
            handle = path.open(encoding="utf-8", errors="replace")
            info = os.fstat(handle.fileno())
            identity = (info.st_dev, info.st_ino)
            if from_end:
                handle.seek(0, os.SEEK_END)
            from_end = False
        if handle is not None:
            if drain():
                continue
            if _replaced(path, identity):
                drain()  # what was appended just before the rotation
                handle.close()
                for newer in _rotated_since(path, identity):  # files that rotated past while we slept
                    with newer.open(encoding="utf-8", errors="replace") as whole:
                        handle, buffer = whole, ""
                        drain()
                handle, buffer = None, ""
                continue
        time.sleep(FOLLOW_POLL_SECONDS)


def _rotated_since(path: Path, identity: tuple[int, int] | None) -> list[Path]:
    """The rotated files newer than the one we were reading (when it is still there to be found)."""
    rotated = log_files(path)[:-1] if path.exists() else log_files(path)
    for index, file in enumerate(rotated):
        try:
            info = file.stat()
        except FileNotFoundError:
            continue
        if (info.st_dev, info.st_ino) == identity:
            return rotated[index + 1 :]
    return []


def _replaced(path: Path, identity: tuple[int, int] | None) -> bool:
    try:
        info = path.stat()
    except FileNotFoundError:
        return True
    return (info.st_dev, info.st_ino) != identity


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=f"{PROG} audit", description="Read the audit log of tool calls.")
    actions = parser.add_subparsers(dest="action", required=True)
    tail_cmd = actions.add_parser("tail", help="the last lines (with -f, then new ones as they come)")
    tail_cmd.add_argument("-n", "--lines", type=int, default=20, metavar="N", help="lines to print (default: 20)")
    tail_cmd.add_argument("-f", "--follow", action="store_true", help="keep printing new lines until Ctrl-C")
    grep_cmd = actions.add_parser("grep", help="every line matching a regular expression (exit 1 when none does)")
    grep_cmd.add_argument("pattern", help="a Python regular expression, matched against the stored (masked) line")
    grep_cmd.add_argument("-i", "--ignore-case", action="store_true", help="match without regard to case")
    for command in (tail_cmd, grep_cmd):
        command.add_argument("--user", metavar="ID", help="only this user's calls")
        command.add_argument("--tool", metavar="NAME", help="only this tool's calls")
        command.add_argument("--status", choices=STATUSES, help="only results with this status")
        command.add_argument("--event", choices=EVENTS, help="only tool_call, tool_result or request lines")
        command.add_argument("--since", type=parse_time, metavar="TIME", help="from this time: 15m, 2h, 7d, RFC 3339")
        command.add_argument("--until", type=parse_time, metavar="TIME", help="up to this time (same forms)")
        command.add_argument("--format", choices=("json", "text"), default="json", help="stored JSON, or short text")
        add_setting_flags(command, only=AUDIT_SETTINGS)
    return parser


def _filters(args: argparse.Namespace) -> Filters:
    pattern = None
    if args.action == "grep":
        try:
            pattern = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
        except re.error as exc:
            raise AuditCommandError(f"bad pattern {args.pattern!r}: {exc}") from None
    status = args.status
    return Filters(args.user, args.tool, status, args.event, args.since, args.until, pattern)


def _log_path(args: argparse.Namespace) -> Path:
    flags = {name: getattr(args, name) for name in AUDIT_SETTINGS if hasattr(args, name)}
    target = settings_or_exit(flags).audit_target
    if target == "off":
        raise AuditCommandError("the audit log is off (--audit-log off / TRULOOP_AUDIT_LOG=off): nothing to read")
    if target == "-":
        raise AuditCommandError("the audit log goes to a standard stream (--audit-log -), not to a file: read it there")
    return target


def run(argv: Sequence[str]) -> None:
    args = _parser().parse_args(list(argv))
    try:
        filters = _filters(args)
        path = _log_path(args)
        if not log_files(path) and not getattr(args, "follow", False):
            raise AuditCommandError(f"no audit log at {path} yet (no tool was called, or it is written elsewhere)")
    except AuditCommandError as exc:
        fail(str(exc))
    text = args.format == "text"

    def out(raw: str, record: dict[str, Any]) -> None:
        sys.stdout.write((as_text(record) if text else raw) + "\n")
        if args.action == "tail" and args.follow:
            sys.stdout.flush()

    try:
        if args.action == "grep":
            found = grep(path, filters, out)
            sys.stdout.flush()
            raise SystemExit(0 if found else 1)
        if args.lines > 0:
            tail(path, filters, args.lines, out)
        sys.stdout.flush()
        if args.follow:
            follow(path, filters, out, from_end=path.exists())
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:  # `| head`
        sys.stderr.close()
