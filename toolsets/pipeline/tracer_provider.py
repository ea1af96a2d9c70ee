"""Whether an OpenTelemetry SDK tracer provider is installed (e.g. by `opentelemetry-instrument`): until one
is, every span is a non-recording no-op, so the server skips the work of making them. A module of its own:
the MCP front asks before `initialize` is answered, when the tracing middleware is not loaded yet."""

from __future__ import annotations

from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, get_tracer_provider


def provider_installed() -> bool:
    return not isinstance(get_tracer_provider(), ProxyTracerProvider | NoOpTracerProvider)
