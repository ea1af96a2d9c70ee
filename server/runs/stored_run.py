"""The one runner of stored runs: an MCP task's run (server/tasks/engine.py) and a schedule's tick
(server/schedules/ticks.py) take the same steps, here, once:

1. the record, as its engine read and claimed it (a task's lease, a tick's claim of its planned instant: each
   engine keeps its own exactly-once rule, see docs/architecture.md#stored-runs);
2. the caller rebuilt from what the record kept of them (`stored_caller`), and the call's ports (the strategy's
   `context`: a task's ports to the client and the device, a tick's nobody-to-ask);
3. the call through the door, on the one call route (`server.call_route.route_call`: not a client's call, with the
   run's admission kind), again while the strategy says the outcome may be tried again (`retry_after`);
4. the outcome settled on the record (the strategy's `settle`: a task's record changed while its run holds the
   lease; a tick's run recorded and told).

What differs between the two is a small strategy object (`RunStrategy`); the runner holds no state of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import anyio

from server.mcp.call_route import route_call
from toolsets.core.context import Caller

if TYPE_CHECKING:
    from toolsets.admission.kinds import RequestKind
    from toolsets.core.context import RequestInfo, ToolContext
    from toolsets.core.envelope import ToolResult
    from toolsets.front_door import FrontDoor

R = TypeVar("R")
R_contra = TypeVar("R_contra", contravariant=True)


class RunStrategy(Protocol[R_contra]):
    """What one kind of stored run does its own way."""

    @property
    def kind(self) -> RequestKind:
        """The admission kind of its calls."""
        ...

    def call_of(self, record: R_contra) -> tuple[str, dict[str, Any]]:
        """The tool and the arguments the record keeps."""
        ...

    def caller(self, record: R_contra) -> Caller:
        """Who made the record, as `stored_caller` rebuilds them from it."""
        ...

    def context(
        self, door: FrontDoor, record: R_contra, caller: Caller, request: RequestInfo | None
    ) -> ToolContext[Any]:
        """The call's context, with the run's ports (`request`: the client's request the run started in, if any)."""
        ...

    def retry_after(self, record: R_contra, outcome: ToolResult, attempt: int) -> float | None:
        """Seconds to wait before trying the call again after this outcome of attempt `attempt`; None: it is final."""
        ...

    async def settle(self, record: R_contra, outcome: ToolResult, attempts: int) -> Any:
        """Write the outcome on the record (and tell whoever is to be told); what the engine reads of it after."""
        ...


def stored_caller(user_id: str, role: str, timezone: str, locale: str, claims: Mapping[str, Any]) -> Caller:
    """The caller a record kept: their id, role, zone, language and token claims."""
    return Caller(user_id=user_id, role=role, timezone=timezone, claims=dict(claims), locale=locale)  # type: ignore[arg-type]


class StoredRun(Generic[R]):
    """The steps of a stored run, over one strategy."""

    __slots__ = ("_door", "strategy")

    def __init__(self, door: Callable[[], FrontDoor], strategy: RunStrategy[R]) -> None:
        self._door = door
        self.strategy = strategy

    async def call(self, record: R, request: RequestInfo | None = None) -> tuple[ToolResult, int]:
        """The record's call through the door as its caller: (its outcome, the attempts it took)."""
        strategy = self.strategy
        door = self._door()
        ctx = strategy.context(door, record, strategy.caller(record), request)
        name, arguments = strategy.call_of(record)
        attempt = 0
        while True:
            attempt += 1
            outcome = await route_call(door, ctx, name, arguments, client=False, kind=strategy.kind)
            wait = strategy.retry_after(record, outcome, attempt)
            if wait is None:
                return outcome, attempt
            await anyio.sleep(wait)

    async def settle(self, record: R, outcome: ToolResult, attempts: int = 1) -> Any:
        return await self.strategy.settle(record, outcome, attempts)

    async def run(self, record: R, request: RequestInfo | None = None) -> Any:
        """`call`, then `settle`: the whole run (a task's run settles apart, once its lease's renewal has stopped)."""
        outcome, attempts = await self.call(record, request)
        return await self.settle(record, outcome, attempts)
