"""The metrics registry is the deployment's own, and what the call pipeline records in it (docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path

import prometheus_client
import pytest

from server.runtime.composition import Deployment
from server.runtime.metrics import MAX_TOOLS, OTHER_TOOLS, ServerMetrics
from tests.support import settings
from toolsets.core.context import Caller
from toolsets.pipeline.call_metrics import UNKNOWN_TOOL

pytestmark = pytest.mark.timeout(60)

CALLS = "truloop_tool_calls_total"


async def call(deployment: Deployment, name: str, arguments: object, role: str = "member") -> None:
    door = deployment.front_door
    caller = Caller("alice", role=role, timezone="Asia/Seoul")  # type: ignore[arg-type]
    await door.call(door.context_for(caller, role), name, arguments)


def calls(metrics: ServerMetrics | None, tool: str, outcome: str) -> float | None:
    assert metrics is not None
    return metrics.registry.get_sample_value(CALLS, {"tool": tool, "outcome": outcome})


@pytest.mark.anyio
async def test_each_deployment_counts_in_a_registry_of_its_own(tmp_path: Path) -> None:
    one = Deployment(settings(data_dir=tmp_path / "one"), metered=True)
    two = Deployment(settings(data_dir=tmp_path / "two"), metered=True)
    assert one.metrics is not None and two.metrics is not None and one.metrics.registry is not two.metrics.registry

    await call(one, "get_day_of_week", {"date": "2026-03-10"})
    await call(one, "get_day_of_week", {"date": "2026-03-10"})
    await call(two, "get_day_of_week", {"date": "2026-03-10"})

    assert calls(one.metrics, "get_day_of_week", "ok") == 2
    assert calls(two.metrics, "get_day_of_week", "ok") == 1
    count = "truloop_tool_call_duration_seconds_count"
    assert one.metrics.registry.get_sample_value(count, {"tool": "get_day_of_week"}) == 2
    # nothing in the client library's process-wide registry
    assert prometheus_client.REGISTRY.get_sample_value(CALLS, {"tool": "get_day_of_week", "outcome": "ok"}) is None


def test_a_deployment_that_is_not_metered_has_no_registry(tmp_path: Path) -> None:
    deployment = Deployment(settings(data_dir=tmp_path / "data"))
    assert deployment.metrics is None
    chain = deployment.front_door.profiles.profile("member").middleware  # type: ignore[attr-defined]
    assert "MetricsMiddleware" not in {type(one).__name__ for one in chain}


@pytest.mark.anyio
async def test_refused_calls_are_counted_with_bounded_labels(tmp_path: Path) -> None:
    deployment = Deployment(settings(data_dir=tmp_path / "data"), metered=True)
    await call(deployment, "no_such_tool_" + "x" * 40, {})
    await call(deployment, "get_day_of_week", {"date": 12})
    await call(deployment, "get_day_of_week", {"date": "2026-03-10"}, role="guest")  # not a guest's tool

    metrics = deployment.metrics
    assert calls(metrics, UNKNOWN_TOOL, "unknown_tool") == 2
    assert calls(metrics, "get_day_of_week", "validation") == 1
    assert metrics is not None
    # a refused call never ran: counted, not timed
    assert metrics.registry.get_sample_value("truloop_tool_call_duration_seconds_count", {"tool": UNKNOWN_TOOL}) is None


def test_tool_labels_past_the_cap_fold_into_one() -> None:
    metrics = ServerMetrics(deferred_waiting=lambda: 0, redis=False)
    for index in range(MAX_TOOLS + 5):
        metrics.record(f"tool_{index}", "ok", 0.01)
    metrics.record("tool_0", "ok", 0.01)  # a tool already counted keeps its label

    assert calls(metrics, "tool_0", "ok") == 2
    assert calls(metrics, OTHER_TOOLS, "ok") == 5
    assert calls(metrics, f"tool_{MAX_TOOLS}", "ok") is None


def test_the_gauges_are_read_at_scrape_time() -> None:
    waiting = [0]
    metrics = ServerMetrics(deferred_waiting=lambda: waiting[0], redis=False)
    metrics.count_sessions("/mcp", lambda: 3)
    waiting[0] = 2
    text = metrics.exposition().decode()
    assert "truloop_deferred_calls_waiting 2.0" in text
    assert 'truloop_sessions_open{endpoint="/mcp"} 3.0' in text
    assert "truloop_redis_up" not in text  # no Redis configured: no gauge that would read 0
