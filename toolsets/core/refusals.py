"""Calls the dispatcher refuses before the pipeline (unknown tool, invalid arguments): no middleware sees
them, so they are audited and traced here, and still leave a `tool_call`/`tool_result` pair and a span."""

from __future__ import annotations

import logging
from typing import Any

from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr

logger = logging.getLogger("truloop.dispatch")


def refused(name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> ToolErr:
    from toolsets.pipeline.audit.middleware import audit_refusal
    from toolsets.pipeline.tracing import trace_refusal

    audit_refusal(name, raw_args, ctx, refusal)
    try:
        trace_refusal(name, ctx, refusal)
    except Exception:
        logger.exception("could not trace a refused call of %s", name)
    return refusal
