"""The deployment's feedback recorder (toolsets/extensions/plugins/feedback.py): the store it writes to, its
arguments masked by the audit log's masking with the server's own secrets (made on the first failed call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.extensions.plugins.feedback import FeedbackRecorder
    from toolsets.infra.store.feedback import FeedbackStore


def feedback_recorder(
    settings: Settings, store: Callable[[], FeedbackStore], emit: Callable[[dict[str, Any]], None] | None
) -> FeedbackRecorder:
    from toolsets.extensions.plugins.feedback import FeedbackRecorder

    def masker() -> Callable[[Any], Any]:
        from server.runtime.audit_log import known_secrets
        from toolsets.pipeline.audit.masking import Masker

        return Masker(known_secrets(settings)).value

    return FeedbackRecorder(store, masker, emit)
