"""Schedules of tool runs and their recent runs (`ScheduleStore`), in SQLite or PostgreSQL."""

from toolsets.infra.store.schedules.contract import (
    MAX_RUNS_KEPT,
    Schedule,
    ScheduleCapReachedError,
    ScheduleRun,
    ScheduleStore,
)

__all__ = ["MAX_RUNS_KEPT", "Schedule", "ScheduleCapReachedError", "ScheduleRun", "ScheduleStore"]
