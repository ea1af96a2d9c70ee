"""Whether an OpenTelemetry SDK tracer provider is installed (e.g. by `opentelemetry-instrument`): until one
is, every span is a non-recording no-op, so the server skips the work of making them. A module of its own:
the MCP front asks before `initialize` is answered, when the tracing middleware is not loaded yet.

Without `opentelemetry.trace` loaded, no provider can have been installed (that takes its
`set_tracer_provider`), and without the variable naming one none will be loaded: then the answer is no,
without importing the API (a process that never traces, such as a stdio server without the MCP SDK, never
loads it). Otherwise the API is asked, as `get_tracer_provider()` decides.
"""

from __future__ import annotations

import os
import sys

# opentelemetry.environment_variables.OTEL_PYTHON_TRACER_PROVIDER: get_tracer_provider() loads the provider it
# names (checked against the API's own constant by tests/toolsets/test_tracing.py)
PROVIDER_VARIABLE = "OTEL_PYTHON_TRACER_PROVIDER"


def provider_installed() -> bool:
    if "opentelemetry.trace" not in sys.modules and PROVIDER_VARIABLE not in os.environ:
        return False
    from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, get_tracer_provider

    return not isinstance(get_tracer_provider(), ProxyTracerProvider | NoOpTracerProvider)
