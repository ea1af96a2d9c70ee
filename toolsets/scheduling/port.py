"""What the schedule tools need from the deployment's engine (the server's; None where a front has none)."""

from __future__ import annotations

from typing import Protocol

from toolsets.infra.store.schedules import Schedule


class SchedulerPort(Protocol):
    @property
    def min_interval(self) -> float:
        """Seconds: no schedule may fire more often (`--schedule-min-interval`)."""
        ...

    @property
    def max_per_user(self) -> int:
        """Active or paused schedules one user may have."""
        ...

    async def start(self, schedule: Schedule) -> None:
        """Queue a stored schedule's first tick (`next_run_at`, planned before it was stored)."""
        ...

    async def stop(self, schedule_id: str) -> None:
        """Take a cancelled schedule's next tick off the engine (a run under way finishes)."""
        ...
