"""One OpenTelemetry span per tool call, named and described as the GenAI semantic conventions say,
captured with the SDK's in-memory exporter."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support import MODES, child_env, server_for

ROOT = Path(__file__).resolve().parents[2]

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def provider() -> Iterator[None]:
    """The process-wide provider can be set once; the tracer the middleware holds is a proxy that follows it."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    processor = SimpleSpanProcessor(EXPORTER)
    current.add_span_processor(processor)
    yield
    processor.shutdown()  # later tests' spans go nowhere


@pytest.fixture
def spans(provider: None) -> Iterator[InMemorySpanExporter]:
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


def tool_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name.startswith("execute_tool ")]


@pytest.mark.anyio
@MODES
async def test_a_call_is_one_execute_tool_span_inside_the_servers_tools_call_span(
    mode: str, spans: InMemorySpanExporter
) -> None:
    async with Client(server_for(user="alice"), mode=mode) as client:
        await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    (span,) = tool_spans(spans)
    attributes = dict(span.attributes or {})
    assert span.name == "execute_tool get_day_of_week" and span.kind == trace.SpanKind.INTERNAL
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "get_day_of_week"
    assert str(attributes["gen_ai.tool.call.id"]).startswith("tc_")
    assert "error.type" not in attributes and span.status.status_code == trace.StatusCode.UNSET
    (parent,) = [s for s in spans.get_finished_spans() if span.parent and s.context.span_id == span.parent.span_id]
    assert parent.name == "tools/call get_day_of_week"  # the MCP SDK's server span


@pytest.mark.anyio
async def test_a_failed_call_says_its_error_type(spans: InMemorySpanExporter) -> None:
    async with Client(server_for(user="alice")) as client:
        await client.call_tool("get_day_of_week", {"date": "not a date"})
        await client.call_tool("no_such_tool", {})
    by_name = {span.name: dict(span.attributes or {}) for span in tool_spans(spans)}
    assert by_name["execute_tool get_day_of_week"]["error.type"] == "validation"
    assert by_name["execute_tool no_such_tool"]["error.type"] == "unknown_tool"
    assert all(span.status.status_code == trace.StatusCode.ERROR for span in tool_spans(spans))


@pytest.mark.anyio
async def test_the_span_and_the_audit_line_share_the_call_id(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    server = server_for(user="alice", audit_log=str(tmp_path / "audit.jsonl"))
    async with Client(server) as client:
        await client.call_tool("get_current_datetime", {"timezone": "Asia/Seoul"})
    assert server.services.audit.flush()
    (line, _) = [json.loads(text) for text in (tmp_path / "audit.jsonl").read_text().splitlines()]
    (span,) = tool_spans(spans)
    assert (span.attributes or {})["gen_ai.tool.call.id"] == line["call_id"]


@pytest.mark.anyio
async def test_a_deferred_call_names_its_route(spans: InMemorySpanExporter) -> None:
    call = {"notification_message": "x", "title": "t", "message": "m"}
    async with Client(server_for(user="alice", transport="http")) as client:
        await client.call_tool("confirm_interaction", call)
    (span,) = tool_spans(spans)
    assert (span.attributes or {})["truloop.deferred.route"] == "none"
    assert (span.attributes or {})["error.type"] == "no_route"


def test_no_provider_is_known_without_loading_the_api_and_the_variable_is_the_apis() -> None:
    """`provider_installed` answers no without importing `opentelemetry.trace` while nothing could have installed
    a provider (the API not loaded, no `OTEL_PYTHON_TRACER_PROVIDER`); with the variable set it asks the API."""
    from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER

    from toolsets.pipeline.tracer_provider import PROVIDER_VARIABLE

    assert PROVIDER_VARIABLE == OTEL_PYTHON_TRACER_PROVIDER
    probe = (
        "import sys; from toolsets.pipeline.tracer_provider import provider_installed; "
        "print(provider_installed(), 'opentelemetry.trace' in sys.modules)"
    )
    env = child_env()
    env.pop(OTEL_PYTHON_TRACER_PROVIDER, None)
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=30, cwd=ROOT)
    assert plain.stdout.split() == ["False", "False"], plain.stderr
    env[OTEL_PYTHON_TRACER_PROVIDER] = "sdk_tracer_provider"  # the SDK's entry point: a real provider
    named = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=30, cwd=ROOT)
    assert named.stdout.split() == ["True", "True"], named.stderr
