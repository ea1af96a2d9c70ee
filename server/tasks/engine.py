"""MCP tasks: a tool call the client need not wait on, kept in the task store and finished from any replica.

A task's call runs through the front door like any call (gates, confirmation, audit), in runs: the first starts
when the task is made; a run that has to wait ends, and what it waits for runs the call again, on whichever replica
it arrives at, from the record alone (server/tasks/ports.py):

- the device's answer to a deferred tool's call: the device route hands it here (`device_answered`), it is written to
  the record first, then the call runs again and finds it;
- the client's answers on 2026-07-28 (`tasks/update`): written to the record, and the call runs again;
- on a 2025-11-25 session that is still open, questions go out on it and the run waits, as in any call.

A run holds a lease on its record: the engine's own id and an expiry, renewed while the run goes on
(`LEASE_SECONDS`, renewed every third of it). A run starts only by taking the lease: the engine that makes the task,
or moves it from `input_required` to `working` on the client's answers, writes its lease in that same change, and a
device's answer starts a run only on a record that no run holds. A lease that expired (its replica died, or lost the
store) fails the task as interrupted, on whichever replica reads it first, and that run is never started again: a
destructive call runs at most once. A task waiting on a device or a person holds no lease, so it survives any
replica's restart.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from server.runs.stored_run import StoredRun, stored_caller
from toolsets.admission.kinds import RequestKind
from toolsets.core.context import Caller, RequestInfo
from toolsets.core.envelope import ToolErr, ToolInputRequired, ToolResult
from toolsets.core.errors import CallCancelled, ErrorCode
from toolsets.infra.store.tasks import ClientFlags, TaskLimitError, TaskRecord, TaskStore, TaskSummary, now_ms

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from bridge.jsonrpc import RpcResponse
    from bridge.pending import PendingCall
    from bridge.service import DeviceBridge
    from toolsets.core.conversation import Conversation
    from toolsets.front_door import FrontDoor

logger = logging.getLogger("truloop.tasks")

RUN_AFTER_ANSWER_SECONDS = 10.0  # how long a device's answer (or a tasks/get) waits for the run it starts
MAX_LIVE = 10_000  # tasks whose open 2025-11-25 session this replica remembers (the oldest is forgotten past it)
LEASE_SECONDS = 15.0  # a run's lease on its record; renewed every third of it, so a dead replica's shows in <= 15 s
INTERRUPTED = (
    "The run of this task was interrupted (the server running it stopped, or lost the task store) and will not be "
    "started again: check what the call did before you make it again."
)


@dataclass(slots=True)
class Live:
    """What only the replica that made a task has: the connection of the session that asked for it (2025-11-25), and
    that session's conversation."""

    connection: Any = None
    conversation: Conversation | None = None


@dataclass(slots=True)
class TaskStart:
    caller: Caller
    profile: str
    tool: str
    arguments: dict[str, Any]
    modern: bool
    client: ClientFlags
    ttl_ms: int
    poll_interval_ms: int
    request: RequestInfo
    live: Live = field(default_factory=Live)
    answers: dict[str, Any] = field(default_factory=dict)  # the client's answers before the task was made


class TaskEngine:
    def __init__(
        self,
        store: TaskStore,
        door: Callable[[], FrontDoor],
        bridge: DeviceBridge | None,
        *,
        deferred_timeout: float,
        stdio: bool,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self.store = store
        self.replica = secrets.token_hex(8)  # this engine, in the leases it writes
        self._lease_ms = int(lease_seconds * 1000)
        self._door = door
        self._bridge = bridge
        self._timeout = deferred_timeout
        self._stdio = stdio
        self._tg: TaskGroup | None = None
        self._closing = False
        self._scopes: dict[str, anyio.CancelScope] = {}  # runs going on here, to cancel them
        self._locks: dict[str, anyio.Lock] = {}  # one run of a task at a time on this replica
        self._live: dict[str, Live] = {}
        self._changed: dict[str, anyio.Event] = {}  # set when a task changes here (tasks/result waits on it)
        self._runs = StoredRun(door, TaskRun(self))  # a run's call and its settling (server/runs/stored_run.py)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._closing = True
                tg.cancel_scope.cancel()
        self._tg = None

    # -- making and reading ------------------------------------------------------------------------------------

    async def start(self, start: TaskStart) -> TaskRecord:
        """Make the task and start its first run in the background (raises `TaskLimitError`, `RuntimeError`)."""
        if self._tg is None:
            raise RuntimeError("the task engine is not running")
        caller = start.caller
        record = TaskRecord(
            owner=caller.user_id,
            tool=start.tool,
            ttl_ms=start.ttl_ms,
            poll_interval_ms=start.poll_interval_ms,
            profile=start.profile,
            role=caller.role,
            timezone=caller.timezone,
            locale=caller.locale,
            claims=dict(caller.claims),
            arguments=start.arguments,
            modern=start.modern,
            client=start.client,
            answers=start.answers,
            **self._lease(handoff := self._token()),
        )
        record = await self.store.create(record)
        if not start.modern:
            self._remember(record.task_id, start.live)
        self._tg.start_soon(self._run_logged, record.owner, record.task_id, start.request, handoff)
        return record

    def _token(self) -> str:
        return f"{self.replica}/{secrets.token_hex(6)}"

    def _lease(self, token: str) -> dict[str, Any]:
        return {"lease_owner": token, "lease_expires_ms": now_ms() + self._lease_ms}

    async def get(self, owner: str, profile: str, task_id: str) -> TaskRecord | None:
        """`owner`'s task in `profile` (None: none such, expired, or someone else's). A device's answer that no run has
        taken yet (the replica it reached stopped first) is taken now."""
        record = await self._mine(owner, profile, task_id)
        if record is not None and _answered_unrun(record) and task_id not in self._scopes:
            with anyio.move_on_after(RUN_AFTER_ANSWER_SECONDS):
                await self._run(owner, task_id, None)
            record = await self._mine(owner, profile, task_id)
        return record

    async def _mine(self, owner: str, profile: str, task_id: str) -> TaskRecord | None:
        record = await self.store.get(owner, task_id)
        if record is not None and _lapsed(record):
            record = await self.store.change(owner, task_id, lambda current: _interrupt(current, None))
        return record if record is not None and record.profile == profile else None

    async def list(self, owner: str, profile: str, cursor: str | None, limit: int) -> tuple[list[TaskSummary], Any]:
        summaries, next_cursor = await self.store.list(owner, cursor, limit)
        return [s for s in summaries if s.profile == profile], next_cursor

    async def wait(self, owner: str, profile: str, task_id: str) -> TaskRecord | None:
        """The task once it is finished (None: no such task, or it expired meanwhile)."""
        try:
            while True:
                event = self._changed.setdefault(task_id, anyio.Event())
                record = await self.get(owner, profile, task_id)
                if record is None or record.terminal:
                    return record
                with anyio.move_on_after(record.poll_interval_ms / 1000):  # (finished on another replica: read again)
                    await event.wait()
        finally:
            self._changed.pop(task_id, None)  # (another waiter of the same task makes its own on its next turn)

    # -- what the client sends ---------------------------------------------------------------------------------

    async def update(self, owner: str, profile: str, task_id: str, responses: dict[str, Any]) -> TaskRecord | None:
        """The client's answers to the task's questions: kept, and the call runs again (answers to questions it was
        not asked are ignored). None: no such task."""
        if await self._mine(owner, profile, task_id) is None:
            return None
        handoff = self._token()
        started = False

        def answered(record: TaskRecord) -> TaskRecord | None:
            nonlocal started
            started = False
            asked = record.input_requests or {}
            given = {key: value for key, value in responses.items() if key in asked and isinstance(value, dict)}
            if record.status != "input_required" or not given or record.lease_owner is not None:
                return None
            left = {key: request for key, request in asked.items() if key not in given}
            answers = {**record.answers, **given}
            if left:  # the call runs again once every question has its answer
                return record.model_copy(update={"answers": answers, "input_requests": left})
            started = True  # (the run's lease is written with the change that starts it: one run, on this replica)
            update = {"answers": answers, "status": "working", "input_requests": None, **self._lease(handoff)}
            return record.model_copy(update=update)

        if self._tg is None:
            raise RuntimeError("the task engine is not running")
        record = await self.store.change(owner, task_id, answered)
        if record is not None and started:
            self._changed_here(record)
            self._tg.start_soon(self._run_logged, owner, task_id, None, handoff)
        return record

    async def cancel(self, owner: str, profile: str, task_id: str) -> tuple[TaskRecord | None, bool]:
        """(the task as it is now, whether this cancelled it: False when it had already finished)."""
        if await self._mine(owner, profile, task_id) is None:
            return None, False
        was: list[TaskRecord] = []

        def cancelled(record: TaskRecord) -> TaskRecord:
            was.append(record)
            return record.model_copy(
                update={"status": "cancelled", "status_message": "Cancelled by the client.", "input_requests": None}
            )

        record = await self.store.change(owner, task_id, cancelled)
        if record is None or not was:
            return record, False
        if was[0].pending_call_id is not None and self._bridge is not None:
            with contextlib.suppress(Exception):  # the task is cancelled either way; its call just expires
                await self._bridge.withdraw(was[0].pending_call_id, owner)
        scope = self._scopes.get(task_id)
        if scope is not None:
            scope.cancel()
        self._changed_here(record)
        return record, True

    # -- the device ----------------------------------------------------------------------------------------------

    async def device_answered(self, call: PendingCall, response: RpcResponse) -> None:
        """`bridge.service.TaskAnswers`: keep the device's answer on its task (raises when the store is away, so the
        device is told to send it again), then finish the task here."""
        task_id = call.task_id
        if task_id is None:
            return
        wire = response.wire()

        def answered(record: TaskRecord) -> TaskRecord | None:
            if record.pending_call_id != call.call_id or record.device_answer is not None:
                return None
            return record.model_copy(update={"device_answer": wire, "status_message": "The device answered."})

        record = await self.store.change(call.user_id, task_id, answered)
        if record is None or not _answered_unrun(record):
            return
        with anyio.move_on_after(RUN_AFTER_ANSWER_SECONDS):  # (a tasks/get finishes it otherwise)
            try:
                await self._run(call.user_id, task_id, None)
            except Exception:
                logger.exception("task %s: the run after the device's answer failed", task_id)

    # -- runs --------------------------------------------------------------------------------------------------

    async def _run_logged(
        self, owner: str, task_id: str, request: RequestInfo | None, handoff: str | None = None
    ) -> None:
        try:
            await self._run(owner, task_id, request, handoff)
        except Exception:
            logger.exception("task %s: a run failed", task_id)

    async def _run(self, owner: str, task_id: str, request: RequestInfo | None, handoff: str | None = None) -> None:
        """Run the task's call if this takes its lease: the one `handoff` names (written when the run was decided), or
        none at all (a device's answer). Any other lease is another run's; an expired one fails the task."""
        lock = self._locks.setdefault(task_id, anyio.Lock())
        try:
            async with lock:
                token = self._token()
                record = await self.store.change(owner, task_id, lambda current: self._claim(current, handoff, token))
                if record is None or record.lease_owner != token:
                    if record is not None:
                        self._changed_here(record)
                    return
                with anyio.CancelScope() as scope:
                    self._scopes[task_id] = scope
                    try:
                        async with anyio.create_task_group() as renewing:
                            renewing.start_soon(self._renew, owner, task_id, token, scope)
                            outcome, attempts = await self._runs.call(record, request)
                            renewing.cancel_scope.cancel()
                    except anyio.get_cancelled_exc_class():
                        if self._closing:
                            with anyio.CancelScope(shield=True):
                                await self._interrupted(owner, task_id, token)
                        raise
                    finally:
                        self._scopes.pop(task_id, None)
                    after = await self._runs.settle(record, outcome, attempts)
                    if after is not None and _answered_unrun(after) and self._tg is not None:
                        self._tg.start_soon(self._run_logged, owner, task_id, None)  # (answered while it parked)
        finally:
            if not lock.locked():
                self._locks.pop(task_id, None)

    def _claim(self, record: TaskRecord, handoff: str | None, token: str) -> TaskRecord | None:
        if _lapsed(record):
            return _interrupt(record, None)
        if record.status != "working" or record.lease_owner != handoff:
            return None  # waiting for the client, or another run's (or already run)
        if record.pending_call_id is not None and record.device_answer is None:
            return None  # still waiting for the device
        return record.model_copy(update=self._lease(token))

    async def _renew(self, owner: str, task_id: str, token: str, run: anyio.CancelScope) -> None:
        """Keep the run's lease while it goes on; a run that lost it (the task was cancelled, or failed as interrupted
        while this replica could not reach the store) is stopped."""

        def renewed(record: TaskRecord) -> TaskRecord | None:
            return record.model_copy(update=self._lease(token)) if record.lease_owner == token else None

        held_until = anyio.current_time() + self._lease_ms / 1000
        while True:
            await anyio.sleep(self._lease_ms / 3000)
            try:
                record = await self.store.change(owner, task_id, renewed)
            except Exception:
                if anyio.current_time() < held_until:
                    logger.warning("task %s: its lease could not be renewed; trying again", task_id)
                    continue
                logger.warning("task %s: its lease lapsed while the store was away; the run stops", task_id)
                record = None
            if record is None or record.lease_owner != token:
                run.cancel()
                return
            held_until = anyio.current_time() + self._lease_ms / 1000

    async def _device_sent(self, record: TaskRecord, call: PendingCall) -> None:
        def waiting(current: TaskRecord) -> TaskRecord:
            return current.model_copy(
                update={
                    "pending_call_id": call.call_id,
                    "status_message": "Waiting for the user's device to answer.",
                }
            )

        changed = await self.store.change(record.owner, record.task_id, waiting)
        if changed is None or changed.terminal:
            raise CallCancelled("the task was cancelled")

    async def _waiting(self, record: TaskRecord, asking: bool) -> None:
        """(2025-11-25) The run asks the session that made the task, or has its answer."""
        update = (
            {"status": "input_required", "status_message": "Waiting for the client's answer."}
            if asking
            else {"status": "working", "status_message": None}
        )
        await self._apply(record.owner, record.task_id, update)

    async def _interrupted(self, owner: str, task_id: str, token: str) -> None:
        with contextlib.suppress(Exception):
            record = await self.store.change(owner, task_id, lambda current: _interrupt(current, token))
            if record is not None:
                self._changed_here(record)

    async def _apply(
        self, owner: str, task_id: str, update: dict[str, Any], *, lease: str | None = None
    ) -> TaskRecord | None:
        """Change an unfinished task's record by `update` (with `lease`: only while the run holding it does), and tell
        who waits on it here."""

        def applied(current: TaskRecord) -> TaskRecord | None:
            if lease is not None and current.lease_owner != lease:
                return None
            return current.model_copy(update=update)

        record = await self.store.change(owner, task_id, applied)
        if record is not None:
            self._changed_here(record)
        return record

    def _remember(self, task_id: str, live: Live) -> None:
        if len(self._live) >= MAX_LIVE:
            self._live.pop(next(iter(self._live)))
        self._live[task_id] = live

    def _changed_here(self, record: TaskRecord) -> None:
        event = self._changed.pop(record.task_id, None)
        if event is not None:
            event.set()
        live = self._live.get(record.task_id)
        if record.terminal:
            self._live.pop(record.task_id, None)
        if live is not None and live.connection is not None and self._tg is not None:
            self._tg.start_soon(_notify_status, live.connection, record)


class TaskRun:
    """A task's run as a stored run (`server.runs.stored_run.RunStrategy`): its caller from the record, its ports to
    the client (the session that made it, while open on 2025-11-25) and to the device (`server.tasks.ports`), one
    attempt, and its outcome written on the record while the run holds the lease it claimed."""

    __slots__ = ("_engine",)
    kind = RequestKind.TASK_RUN

    def __init__(self, engine: TaskEngine) -> None:
        self._engine = engine

    def call_of(self, record: TaskRecord) -> tuple[str, dict[str, Any]]:
        return record.tool, record.arguments

    def caller(self, record: TaskRecord) -> Caller:
        return stored_caller(record.owner, record.role, record.timezone, record.locale, record.claims)

    def context(self, door: FrontDoor, record: TaskRecord, caller: Caller, request: RequestInfo | None) -> Any:
        from server.tasks.ports import TaskPorts, TaskSession  # (the MCP SDK: not before a stdio server's first answer)

        engine = self._engine
        live = engine._live.get(record.task_id)
        session = None
        if live is not None and live.connection is not None:

            async def waiting(asking: bool) -> None:
                await engine._waiting(record, asking)

            session = TaskSession(live.connection, record.task_id, waiting)
        ports = TaskPorts(
            record,
            engine._bridge,
            session=session,
            device_sent=lambda call: engine._device_sent(record, call),
            timeout=engine._timeout,
            stdio=engine._stdio,
        )
        info = request or RequestInfo(request_id=record.task_id, transport="task", profile=record.profile)
        return door.context_for(
            caller,
            record.profile,
            request=info,
            conversation=live.conversation if live is not None else None,
            confirmer=ports,
            deferred=ports,
            composer=ports,
            client=ports,
        )

    def retry_after(self, record: TaskRecord, outcome: ToolResult, attempt: int) -> float | None:
        return None  # (a task's client polls it and makes it again if it wants: one attempt per run)

    async def settle(self, record: TaskRecord, outcome: ToolResult, attempts: int) -> TaskRecord | None:
        """The outcome on the record, only while this run holds the lease it claimed (`record.lease_owner`)."""
        return await self._engine._apply(record.owner, record.task_id, settled(outcome), lease=record.lease_owner)


NOTIFY_SECONDS = 2.0  # a client that does not read its stream holds up no task


async def _notify_status(connection: Any, record: TaskRecord) -> None:
    """(2025-11-25) `notifications/tasks/status` to the session that made the task, while it is open."""
    from server.tasks.wire import task_fields

    with anyio.move_on_after(NOTIFY_SECONDS), contextlib.suppress(Exception):
        await connection.notify("notifications/tasks/status", task_fields(record, modern=False))


def _answered_unrun(record: TaskRecord) -> bool:
    return (
        not record.terminal
        and record.device_answer is not None
        and record.status == "working"
        and record.lease_owner is None
    )


def _lapsed(record: TaskRecord) -> bool:
    """Whether the run holding the task's lease has stopped renewing it."""
    expires = record.lease_expires_ms
    return not record.terminal and record.lease_owner is not None and expires is not None and expires <= now_ms()


def _interrupt(record: TaskRecord, token: str | None) -> TaskRecord | None:
    """The task failed as interrupted: its run's lease lapsed (`token` None), or the run holding `token` stopped."""
    holds = record.lease_owner == token if token is not None else _lapsed(record)
    if not holds:
        return None
    update = {
        "status": "failed",
        "status_message": INTERRUPTED,
        "error": {"code": -32603, "message": INTERRUPTED},
        "input_requests": None,
        "lease_owner": None,
        "lease_expires_ms": None,
    }
    return record.model_copy(update=update)


def settled(outcome: ToolResult) -> dict[str, Any]:
    """How a run's outcome changes its task's record."""
    from bridge.elicitation import questions_of
    from server.mcp.wire_forms import call_result
    from server.tasks.ports import Parked

    if isinstance(outcome, ToolInputRequired):
        payload = outcome.payload
        if isinstance(payload, Parked):
            return {"status": "working", **RELEASED}
        asked = questions_of(payload)
        if asked is not None:
            questions, answers = asked
            return {
                "status": "input_required",
                "status_message": "Waiting for the client's answer.",
                "input_requests": questions,
                "answers": answers,
                **RELEASED,
            }
        message = "The call needed a round trip with the client that a task cannot make."
        error = {"code": -32603, "message": message}
        return {"status": "failed", "status_message": message, "error": error, **RELEASED}
    if isinstance(outcome, ToolErr) and outcome.code is ErrorCode.CLIENT_CAPABILITY:
        from server.mcp.plugin_requests import json_rpc_error

        error = json_rpc_error(outcome).error.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {"status": "failed", "status_message": outcome.reason, "error": error, **RELEASED}
    return {"status": "completed", "status_message": None, "result": call_result(outcome), **RELEASED}


RELEASED: dict[str, Any] = {"lease_owner": None, "lease_expires_ms": None}  # (a run that ends gives its lease back)


__all__ = ["Live", "TaskEngine", "TaskLimitError", "TaskStart", "settled"]
