"""`truloop-mcp tools feedback NAME`: a tool's feedback (failed calls, canary holds and rollbacks), read from the
server's store (`--data-dir`, or `--database-url`), newest first, as text or JSON. The operator is nobody's caller:
arguments and failing inputs are shown by shape (toolsets/extensions/plugins/feedback_view.py)."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio

from server.cli.shared import PROG

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.infra.store.feedback import FeedbackEntry


def show_feedback(settings: Settings, name: str, limit: int, as_json: bool) -> str:
    from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL

    if not 1 <= limit <= MAX_FEEDBACK_PER_TOOL:
        sys.stderr.write(f"{PROG}: tools feedback: --limit must be 1 to {MAX_FEEDBACK_PER_TOOL}\n")
        raise SystemExit(2)
    entries = anyio.run(_read, settings, name, limit)
    if as_json:
        report = {"name": name, "kept": MAX_FEEDBACK_PER_TOOL, "entries": [e.model_dump() for e in entries]}
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    if not entries:
        return f"{name}: no feedback\n"
    return "".join(_text(entry) for entry in entries)


async def _read(settings: Settings, name: str, limit: int) -> list[FeedbackEntry]:
    from toolsets.extensions.plugins.feedback_view import seen_by
    from toolsets.infra.store.backend import open_backend

    backend = open_backend(settings.data_dir, settings.database_url)
    try:
        return [seen_by(entry, None) for entry in await backend.feedback.recent(name, limit)]
    finally:
        await backend.aclose()


def _text(entry: FeedbackEntry) -> str:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.at))
    head = f"{when}  {entry.tool}@{entry.version}  {entry.kind}  route {entry.route}"
    if entry.kind == "call":
        lines = [f"{head}  {entry.code}: {entry.message}", f"  arguments: {_json(entry.arguments)}"]
    else:
        lines = [f"{head}  rule {entry.rule}: {entry.message}"]
        for who, numbers in (entry.windows or {}).items():
            lines.append(f"  {who}: {_json(numbers)}")
        lines.extend(f"  failing input: {_json(sample)}" for sample in entry.samples)
    return "\n".join(lines) + "\n"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
