"""One deployment's Prometheus metrics (docs/metrics.md), in a `CollectorRegistry` of its own: two deployments in
one process never share a series, and nothing is registered in the client library's global registry.

Built by the deployment that serves HTTP (`Deployment(settings, metered=True)`); stdio never imports the client.
Every call is recorded through `toolsets.pipeline.call_metrics.MetricsMiddleware` (this is its `CallRecorder`);
the gauges are read when Prometheus scrapes: the deferred calls and sessions from functions bound here, the store
and Redis from the pings `server.http.metrics_route` makes just before.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest
from prometheus_client.process_collector import ProcessCollector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # the text format every Prometheus reads
# from a clock lookup to a person answering a deferred tool on their phone (`--deferred-timeout` is 300 s by default)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
MAX_TOOLS = 500  # distinct tool labels; tools the model writes itself could otherwise grow the series without end
OTHER_TOOLS = "(other)"  # the tool label past MAX_TOOLS


class ServerMetrics:
    """The registry and its metrics; `record` is what the call pipeline reports to."""

    def __init__(self, *, deferred_waiting: Callable[[], int], redis: bool) -> None:
        registry = self.registry = CollectorRegistry()
        self._calls = Counter(
            "truloop_tool_calls",
            "Tool calls, by tool and outcome (ok, input_required, or the error code).",
            ("tool", "outcome"),
            registry=registry,
        )
        self._duration = Histogram(
            "truloop_tool_call_duration_seconds",
            "Time a tool call spent in the pipeline (gates, confirmation, the tool, a device's answer).",
            ("tool",),
            buckets=BUCKETS,
            registry=registry,
        )
        waiting = Gauge(
            "truloop_deferred_calls_waiting", "Device calls that requests on this replica wait on.", registry=registry
        )
        waiting.set_function(deferred_waiting)
        self._sessions = Gauge(
            "truloop_sessions_open", "Open MCP sessions (handshake era), by endpoint.", ("endpoint",), registry=registry
        )
        self.store_up = Gauge("truloop_store_up", "1 when the store answered a ping at scrape time.", registry=registry)
        self.redis_up = (
            Gauge("truloop_redis_up", "1 when Redis answered a ping at scrape time.", registry=registry)
            if redis
            else None
        )
        self._limited = Counter(
            "truloop_requests_limited",
            "Requests refused by a caller's bounds, by kind (call, read, prompt, task, ...) and limit (rate or "
            "concurrency); never by user.",
            ("kind", "limit"),
            registry=registry,
        )
        ProcessCollector(registry=registry)  # process_cpu_seconds_total, process_resident_memory_bytes, ...
        self._tools: set[str] = set()
        # each series' child, found once (`labels()` costs as much as the increment): bounded as the labels are
        self._counted: dict[tuple[str, str], Counter] = {}
        self._timed: dict[str, Histogram] = {}

    def record(self, tool: str, outcome: str, seconds: float | None) -> None:
        if tool not in self._tools:
            if len(self._tools) >= MAX_TOOLS:
                tool = OTHER_TOOLS
            else:
                self._tools.add(tool)
        counter = self._counted.get((tool, outcome))
        if counter is None:
            counter = self._counted[(tool, outcome)] = self._calls.labels(tool, outcome)
        counter.inc()
        if seconds is not None:
            timer = self._timed.get(tool)
            if timer is None:
                timer = self._timed[tool] = self._duration.labels(tool)
            timer.observe(seconds)

    def limited(self, kind: str, limit: str) -> None:
        """`toolsets.admission.admission.RefusalCounter`: the labels are a few fixed words."""
        self._limited.labels(kind, limit).inc()

    def count_sessions(self, endpoint: str, count: Callable[[], int]) -> None:
        """`truloop_sessions_open{endpoint=...}` is `count()` at each scrape."""
        self._sessions.labels(endpoint).set_function(count)

    def exposition(self) -> bytes:
        """Every metric in the text format of `CONTENT_TYPE`."""
        return generate_latest(self.registry)
