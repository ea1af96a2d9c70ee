"""The audit line of a request the call pipeline never sees: a resource read or a prompt get, plugins' included.

One `request` line when it ends, with the fields a tool call's lines carry (who, from where, in which profile),
`tool_name` holding the method (`resources/read`, `prompts/get`), `target` what it named (the URI or the prompt, as
the log's other echoes are clipped), `arguments` a prompt's arguments (masked by the writer like a call's), and the
outcome: `ok`, `error` or `rate_limited`.
"""

from __future__ import annotations

import logging
from typing import Any

from toolsets.core.call import new_call_id
from toolsets.core.context import Caller, RequestInfo
from toolsets.core.echo import echo
from toolsets.pipeline.audit.record import opening
from toolsets.pipeline.audit.writer import AuditSink

logger = logging.getLogger("truloop.audit")

METHODS = {"read": "resources/read", "prompt": "prompts/get"}


def audit_request(
    sink: AuditSink,
    caller: Caller,
    request: RequestInfo,
    kind: str,
    target: str,
    arguments: Any,
    *,
    status: str,
    error_code: str | None,
    latency_ms: float,
    version: str,
) -> None:
    try:
        sink.emit(
            {
                **opening("request", new_call_id(), request, caller),
                "tool_name": METHODS.get(kind, kind),
                "tool_version": version,
                "target": echo(target, 200),
                "arguments": arguments,
                "status": status,
                "error_code": error_code,
                "latency_ms": round(latency_ms, 3),
            }
        )
    except Exception:
        logger.exception("could not audit a %s request", kind)
