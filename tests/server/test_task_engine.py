"""The task engine over a real deployment (in-process, the task store in memory) and the tasks' wire shapes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from server.runtime.composition import Deployment
from server.tasks.engine import TaskEngine, TaskStart
from server.tasks.wire import created, detailed, outcome, task_fields
from tests.support import settings
from toolsets.core.context import Caller, RequestInfo
from toolsets.infra.store.tasks import ClientFlags, TaskRecord

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

ALICE = Caller("alice", timezone="Asia/Seoul")


@pytest.fixture
async def deployment(tmp_path: Path) -> AsyncIterator[Deployment]:
    made = Deployment(settings(data_dir=tmp_path / "data"))
    async with made:
        yield made


def start(tool: str, arguments: dict[str, Any], caller: Caller = ALICE) -> TaskStart:
    return TaskStart(
        caller=caller,
        profile="member",
        tool=tool,
        arguments=arguments,
        modern=True,
        client=ClientFlags(elicit_form=True),
        ttl_ms=60_000,
        poll_interval_ms=100,
        request=RequestInfo(transport="test"),
    )


async def settled(engine: TaskEngine, task_id: str, *statuses: str, owner: str = "alice") -> TaskRecord:
    with anyio.fail_after(10):
        while True:
            record = await engine.get(owner, "member", task_id)
            assert record is not None
            if record.status in statuses:
                return record
            await anyio.sleep(0.01)


async def memory(deployment: Deployment) -> str:
    door = deployment.front_door
    outcome = await door.call(door.context_for(ALICE, "member"), "save_memory", {"content": "주차는 B2"})
    return str(outcome.data.model_dump()["id"])  # type: ignore[union-attr]


async def test_a_confirmation_waits_for_every_answer_and_ignores_unknown_keys(deployment: Deployment) -> None:
    engine = deployment.tasks
    memory_id = await memory(deployment)
    record = await engine.start(start("forget_memory", {"memory_id": memory_id}))
    asking = await settled(engine, record.task_id, "input_required")
    assert asking.input_requests is not None
    (key,) = asking.input_requests
    assert key.startswith("truloop/confirm/forget_memory/")

    unchanged = await engine.update("alice", "member", record.task_id, {"unknown-key": {"ignored": True}})
    assert (
        unchanged is not None
        and unchanged.status == "input_required"
        and unchanged.input_requests == {key: asking.input_requests[key]}
    )
    other = await engine.update(
        "mallory", "member", record.task_id, {key: {"action": "accept", "content": {"confirm": True}}}
    )
    assert other is None  # someone else's task is no task

    await engine.update("alice", "member", record.task_id, {key: {"action": "decline"}})
    done = await settled(engine, record.task_id, "completed")
    assert done.result is not None and done.result["isError"] is True
    store = deployment.services.memories
    assert await store.exists("alice", memory_id) is True  # declined: nothing forgotten


async def test_a_task_is_its_makers_in_its_profile(deployment: Deployment) -> None:
    engine = deployment.tasks
    record = await engine.start(start("get_day_of_week", {"date": "2026-03-10"}))
    assert await engine.get("bob", "member", record.task_id) is None
    assert await engine.get("alice", "guest", record.task_id) is None
    done = await settled(engine, record.task_id, "completed")
    assert done.result is not None and done.result["structuredContent"]["day_of_week"] == "Tuesday"
    mine, cursor = await engine.list("alice", "member", None, 10)
    assert [r.task_id for r in mine] == [record.task_id] and cursor is None
    assert (await engine.list("bob", "member", None, 10))[0] == []


async def test_cancel_is_final_and_said_once(deployment: Deployment) -> None:
    engine = deployment.tasks
    memory_id = await memory(deployment)
    record = await engine.start(start("forget_memory", {"memory_id": memory_id}))
    await settled(engine, record.task_id, "input_required")
    cancelled, now = await engine.cancel("alice", "member", record.task_id)
    assert now and cancelled is not None and cancelled.status == "cancelled" and cancelled.input_requests is None
    again, now = await engine.cancel("alice", "member", record.task_id)
    assert not now and again is not None and again.status == "cancelled"
    late = await engine.update("alice", "member", record.task_id, {"x": {"action": "accept"}})
    assert late is not None and late.status == "cancelled"
    assert await engine.cancel("bob", "member", record.task_id) == (None, False)


def test_the_wire_shapes_of_each_era() -> None:
    record = TaskRecord(owner="alice", tool="t", ttl_ms=60_000, poll_interval_ms=500, status="working")
    made = created(record, modern=True)
    assert set(made) == {"resultType", "taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert made["resultType"] == "task" and made["createdAt"].endswith("Z")
    legacy = created(record, modern=False)
    assert set(legacy) == {"task"} and legacy["task"]["ttl"] == 60_000 and legacy["task"]["pollInterval"] == 500

    tool_error = record.model_copy(update={"status": "completed", "result": {"content": [], "isError": True}})
    assert detailed(tool_error)["status"] == "completed" and detailed(tool_error)["result"]["isError"] is True
    assert task_fields(tool_error, modern=False)["status"] == "failed"  # 2025-11-25: a tool's error fails the task
    assert outcome(tool_error)["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": record.task_id}

    failed = record.model_copy(update={"status": "failed", "error": {"code": -32021, "message": "roots"}})
    assert detailed(failed)["error"] == {"code": -32021, "message": "roots"} and "result" not in detailed(failed)
    asking = record.model_copy(update={"status": "input_required", "input_requests": {"k": {"method": "m"}}})
    assert detailed(asking)["inputRequests"] == {"k": {"method": "m"}}
    assert "requestState" not in detailed(asking)
