"""Feedback on plugin tool versions (`FeedbackStore`): failed calls and the causes of canary holds and rollbacks,
kept per tool (the newest `MAX_FEEDBACK_PER_TOOL`), in SQLite or PostgreSQL."""

from toolsets.infra.store.feedback.contract import MAX_FEEDBACK_PER_TOOL, FeedbackEntry, FeedbackStore

__all__ = ["MAX_FEEDBACK_PER_TOOL", "FeedbackEntry", "FeedbackStore"]
