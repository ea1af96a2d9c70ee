"""Schedules and their runs in the embedded SQLite store (`ScheduleStore`)."""

from __future__ import annotations

import sqlite3
from typing import Any

from toolsets.infra.store.schedules.contract import (
    ENDED,
    MAX_RUNS_KEPT,
    SCHEMA,
    Schedule,
    ScheduleCapReachedError,
    ScheduleRun,
    Status,
)
from toolsets.infra.store.sqlite.database import Database

MIGRATIONS = [SCHEMA]


def _schedule(row: sqlite3.Row) -> Schedule:
    return Schedule.model_validate_json(row["body"])


def _save(conn: sqlite3.Connection, schedule: Schedule) -> None:
    conn.execute(
        "UPDATE schedules SET status = ?, body = ? WHERE id = ?",
        (schedule.status, schedule.model_dump_json(), schedule.id),
    )


class SqliteSchedules:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        await self.db.ensure_schema("schedules", MIGRATIONS)

    async def create(self, schedule: Schedule, *, cap: int) -> Schedule:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> Schedule:
            (active,) = conn.execute(
                "SELECT COUNT(*) FROM schedules WHERE owner_id = ? AND status IN ('active', 'paused')",
                (schedule.owner_id,),
            ).fetchone()
            if active >= cap:
                raise ScheduleCapReachedError(f"{schedule.owner_id} has {active} schedules (at most {cap})")
            conn.execute(
                "INSERT INTO schedules(id, owner_id, status, created_at, body) VALUES(?, ?, ?, ?, ?)",
                (schedule.id, schedule.owner_id, schedule.status, schedule.created_at, schedule.model_dump_json()),
            )
            return schedule

        return await self.db.write(apply)

    async def get(self, schedule_id: str) -> Schedule | None:
        await self._ready()
        row = await self.db.read(
            lambda conn: conn.execute("SELECT body FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
        )
        return _schedule(row) if row is not None else None

    async def listed(self, owner_id: str | None, *, include_ended: bool = False) -> list[Schedule]:
        await self._ready()
        where: list[str] = []
        args: list[str] = []
        if owner_id is not None:
            where.append("owner_id = ?")
            args.append(owner_id)
        if not include_ended:
            where.append("status NOT IN ('cancelled', 'done')")
        sql = "SELECT body FROM schedules" + (" WHERE " + " AND ".join(where) if where else "")
        rows = await self.db.read(lambda conn: conn.execute(sql + " ORDER BY created_at DESC", args).fetchall())
        return [_schedule(row) for row in rows]

    async def set_status(self, schedule_id: str, status: Status, reason: str | None) -> Schedule | None:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> Schedule | None:
            row = conn.execute("SELECT body FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
            if row is None:
                return None
            schedule = _schedule(row)
            if schedule.status in ENDED:
                return schedule
            changed = schedule.model_copy(update={"status": status, "reason": reason})
            if status in ENDED:
                changed.next_run_at = None
            _save(conn, changed)
            return changed

        return await self.db.write(apply)

    async def planned(self, schedule_id: str, next_run_at: str | None) -> None:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT body FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
            if row is not None:
                schedule = _schedule(row)
                if schedule.status not in ENDED:
                    _save(conn, schedule.model_copy(update={"next_run_at": next_run_at}))

        await self.db.write(apply)

    async def claim(self, run: ScheduleRun) -> bool:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> bool:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO schedule_runs(schedule_id, planned_at, started_at, body) VALUES(?, ?, ?, ?)",
                (run.schedule_id, run.planned_at, run.started_at, run.model_dump_json()),
            )
            return inserted.rowcount == 1

        return await self.db.write(apply)

    async def finish(self, run: ScheduleRun) -> None:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE schedule_runs SET body = ? WHERE schedule_id = ? AND planned_at = ?",
                (run.model_dump_json(), run.schedule_id, run.planned_at),
            )
            row = conn.execute("SELECT body FROM schedules WHERE id = ?", (run.schedule_id,)).fetchone()
            if row is not None:
                schedule = _schedule(row)
                counted: dict[str, Any] = {"runs": schedule.runs + 1, "last_run_at": run.planned_at}
                if run.status == "error":
                    counted["failures"] = schedule.failures + 1
                _save(conn, schedule.model_copy(update=counted))
            conn.execute(
                "DELETE FROM schedule_runs WHERE schedule_id = ? AND planned_at NOT IN ("
                "SELECT planned_at FROM schedule_runs WHERE schedule_id = ? ORDER BY planned_at DESC LIMIT ?)",
                (run.schedule_id, run.schedule_id, MAX_RUNS_KEPT),
            )

        await self.db.write(apply)

    async def recent_runs(self, schedule_id: str, limit: int = MAX_RUNS_KEPT) -> list[ScheduleRun]:
        await self._ready()
        rows = await self.db.read(
            lambda conn: conn.execute(
                "SELECT body FROM schedule_runs WHERE schedule_id = ? ORDER BY planned_at DESC LIMIT ?",
                (schedule_id, limit),
            ).fetchall()
        )
        return [ScheduleRun.model_validate_json(row["body"]) for row in rows]
