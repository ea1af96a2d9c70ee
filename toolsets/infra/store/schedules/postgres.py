"""Schedules and their runs in the shared PostgreSQL store (`ScheduleStore`): a tick is claimed by one replica
(`INSERT ... ON CONFLICT DO NOTHING` on the tick's key); an owner's cap is counted under a transaction-scoped
advisory lock on the owner, so two replicas creating at once cannot both pass it."""

from __future__ import annotations

from typing import Any

from toolsets.infra.store.postgres.database import PgDatabase, PgMigration
from toolsets.infra.store.schedules.contract import (
    ENDED,
    MAX_RUNS_KEPT,
    SCHEMA,
    Schedule,
    ScheduleCapReachedError,
    ScheduleRun,
    Status,
)

MIGRATIONS: list[PgMigration] = [SCHEMA]


class PgSchedules:
    def __init__(self, db: PgDatabase) -> None:
        self.pg = db

    async def _ready(self) -> None:
        await self.pg.ensure_schema("schedules", MIGRATIONS)

    async def create(self, schedule: Schedule, *, cap: int) -> Schedule:
        await self._ready()
        async with self.pg.transaction() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("schedules:" + schedule.owner_id,))
            row = await (
                await conn.execute(
                    "SELECT COUNT(*) AS n FROM schedules WHERE owner_id = %s AND status IN ('active', 'paused')",
                    (schedule.owner_id,),
                )
            ).fetchone()
            active = row["n"] if row else 0
            if active >= cap:
                raise ScheduleCapReachedError(f"{schedule.owner_id} has {active} schedules (at most {cap})")
            await conn.execute(
                "INSERT INTO schedules(id, owner_id, status, created_at, body) VALUES(%s, %s, %s, %s, %s)",
                (schedule.id, schedule.owner_id, schedule.status, schedule.created_at, schedule.model_dump_json()),
            )
        return schedule

    async def get(self, schedule_id: str) -> Schedule | None:
        await self._ready()
        async with self.pg.transaction() as conn:
            row = await (await conn.execute("SELECT body FROM schedules WHERE id = %s", (schedule_id,))).fetchone()
        return Schedule.model_validate_json(row["body"]) if row else None

    async def listed(self, owner_id: str | None, *, include_ended: bool = False) -> list[Schedule]:
        await self._ready()
        where: list[str] = []
        args: list[str] = []
        if owner_id is not None:
            where.append("owner_id = %s")
            args.append(owner_id)
        if not include_ended:
            where.append("status NOT IN ('cancelled', 'done')")
        sql = "SELECT body FROM schedules" + (" WHERE " + " AND ".join(where) if where else "")
        async with self.pg.transaction() as conn:
            rows = await (await conn.execute(sql + " ORDER BY created_at DESC", args)).fetchall()
        return [Schedule.model_validate_json(row["body"]) for row in rows]

    async def _change(self, schedule_id: str, change: Any) -> Schedule | None:
        async with self.pg.transaction() as conn:
            row = await (
                await conn.execute("SELECT body FROM schedules WHERE id = %s FOR UPDATE", (schedule_id,))
            ).fetchone()
            if row is None:
                return None
            schedule = Schedule.model_validate_json(row["body"])
            changed = change(schedule)
            if changed is not None:
                await conn.execute(
                    "UPDATE schedules SET status = %s, body = %s WHERE id = %s",
                    (changed.status, changed.model_dump_json(), schedule_id),
                )
                return changed
            return schedule

    async def set_status(self, schedule_id: str, status: Status, reason: str | None) -> Schedule | None:
        await self._ready()

        def change(schedule: Schedule) -> Schedule | None:
            if schedule.status in ENDED:
                return None
            update: dict[str, Any] = {"status": status, "reason": reason}
            if status in ENDED:
                update["next_run_at"] = None
            return schedule.model_copy(update=update)

        return await self._change(schedule_id, change)

    async def planned(self, schedule_id: str, next_run_at: str | None) -> None:
        await self._ready()
        await self._change(
            schedule_id,
            lambda s: None if s.status in ENDED else s.model_copy(update={"next_run_at": next_run_at}),
        )

    async def claim(self, run: ScheduleRun) -> bool:
        await self._ready()
        async with self.pg.transaction() as conn:
            cursor = await conn.execute(
                "INSERT INTO schedule_runs(schedule_id, planned_at, started_at, body) VALUES(%s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (run.schedule_id, run.planned_at, run.started_at, run.model_dump_json()),
            )
            return cursor.rowcount == 1

    async def finish(self, run: ScheduleRun) -> None:
        await self._ready()
        async with self.pg.transaction() as conn:
            await conn.execute(
                "UPDATE schedule_runs SET body = %s WHERE schedule_id = %s AND planned_at = %s",
                (run.model_dump_json(), run.schedule_id, run.planned_at),
            )
            row = await (
                await conn.execute("SELECT body FROM schedules WHERE id = %s FOR UPDATE", (run.schedule_id,))
            ).fetchone()
            if row is not None:
                schedule = Schedule.model_validate_json(row["body"])
                counted: dict[str, Any] = {"runs": schedule.runs + 1, "last_run_at": run.planned_at}
                if run.status == "error":
                    counted["failures"] = schedule.failures + 1
                changed = schedule.model_copy(update=counted)
                await conn.execute(
                    "UPDATE schedules SET body = %s WHERE id = %s", (changed.model_dump_json(), run.schedule_id)
                )
            await conn.execute(
                "DELETE FROM schedule_runs WHERE schedule_id = %s AND planned_at NOT IN ("
                "SELECT planned_at FROM schedule_runs WHERE schedule_id = %s ORDER BY planned_at DESC LIMIT %s)",
                (run.schedule_id, run.schedule_id, MAX_RUNS_KEPT),
            )

    async def recent_runs(self, schedule_id: str, limit: int = MAX_RUNS_KEPT) -> list[ScheduleRun]:
        await self._ready()
        async with self.pg.transaction() as conn:
            rows = await (
                await conn.execute(
                    "SELECT body FROM schedule_runs WHERE schedule_id = %s ORDER BY planned_at DESC LIMIT %s",
                    (schedule_id, limit),
                )
            ).fetchall()
        return [ScheduleRun.model_validate_json(row["body"]) for row in rows]
