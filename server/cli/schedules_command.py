"""`truloop-mcp schedules list|cancel`: every user's scheduled tool runs, for an operator.

    truloop-mcp schedules list [--user ID] [--all] [--json]   the schedules (active and paused; --all: ended too)
    truloop-mcp schedules cancel ID                          stop one for good (its owner is told in the inbox)

Both read the deployment's store (`--data-dir`, or `--database-url` for several replicas). A cancelled schedule
runs no more from any replica: each tick looks at the schedule before it runs, and the engine's queued tick ends
there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from server.cli.operator_commands import (
    STORE_SETTINGS,
    CommandError,
    operator_parser,
    parse,
    reporting_failures,
    store_services,
)
from server.cli.shared import add_setting_flags


def _parser() -> Any:
    parser, schedules = operator_parser("schedules", help="scheduled tool runs")
    listed = schedules.add_parser("list", help="the schedules, newest first")
    listed.add_argument("--user", help="only this user's")
    listed.add_argument("--all", action="store_true", help="cancelled and finished ones too")
    listed.add_argument("--json", action="store_true", help="JSON instead of a table")
    add_setting_flags(listed, only=STORE_SETTINGS)
    cancel = schedules.add_parser("cancel", help="stop a schedule for good")
    cancel.add_argument("id", help="the schedule's id (sch_...)")
    add_setting_flags(cancel, only=STORE_SETTINGS)
    return parser


def run(argv: Sequence[str]) -> None:
    import anyio

    args, settings = parse(_parser(), "schedules", argv)
    services = store_services(settings)

    async def act() -> None:
        store = services.schedules
        if args.action == "list":
            found = await store.listed(args.user, include_ended=args.all)
            rows = [schedule.model_dump(mode="json") for schedule in found]
            sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n" if args.json else table(rows))
            return
        schedule = await store.get(args.id)
        if schedule is None:
            raise CommandError(f"no schedule {args.id!r} (truloop-mcp schedules list --all shows them)")
        changed = await store.set_status(schedule.id, "cancelled", "cancelled by the operator")
        text = f"Scheduled {schedule.tool} ({schedule.id}) was cancelled by the operator."
        await services.inbox.send(
            sender_id="truloop-schedules", recipient_id=schedule.owner_id, text=text, original=text,
            composed_by="template", rate_limited=False,
        )  # fmt: skip
        status = changed.status if changed is not None else "cancelled"
        sys.stdout.write(f"{schedule.id}: {status} ({schedule.owner_id}'s {schedule.tool}, {schedule.when})\n")

    async def main() -> None:
        try:
            await act()
        finally:
            await services.backend.aclose()

    reporting_failures(lambda: anyio.run(main))


def table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no schedules\n"
    head = ("id", "user", "tool", "when", "status", "next run (UTC)", "runs", "failures")
    cells = [
        (r["id"], r["owner_id"], r["tool"], r["when"], r["status"] + (f" ({r['reason']})" if r["reason"] else ""),
         r["next_run_at"] or "-", str(r["runs"]), str(r["failures"]))
        for r in rows
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in (head, *cells)) for i in range(len(head))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)) for row in (head, *cells)]
    return "\n".join(line.rstrip() for line in lines) + "\n"
