"""What the stores (embedded and shared) raise. The tools translate these into the messages a model reads; the store
itself knows nothing of tools, so it never raises a tool error."""

from __future__ import annotations

from pathlib import Path


class StoreError(Exception):
    """The embedded store could not complete an operation."""


class StoreUnavailable(StoreError):  # noqa: N818 - a state of the server database, retryable
    """The server database could not be reached (down, restarting, out of connections); nothing was
    written by the operation that raised it, and the same call may succeed in a moment."""


class Conflict(StoreError):  # noqa: N818 - a state: a unique key (a username) is held by another row
    """A write would break a uniqueness rule (a username taken by another id); nothing was written."""


class SchemaTooNew(StoreError):  # noqa: N818 - a state of the database file
    """The database was written by a newer program; it is refused rather than damaged."""


class RateLimited(StoreError):  # noqa: N818 - a state, reported by the relay as a retryable error
    """A sender is over the inbox's rate limit; `retry_after_seconds` says when the next message fits."""

    def __init__(self, retry_after_seconds: int) -> None:
        super().__init__(retry_after_seconds)
        self.retry_after_seconds = retry_after_seconds


class DocsFolderMissing(StoreError):  # noqa: N818 - a state, reported by the tool as not_configured
    def __init__(self, folder: Path) -> None:
        super().__init__(f"knowledge-base folder {folder} does not exist")
        self.folder = folder


class NotFound(StoreError, LookupError):  # noqa: N818 - a state: the row is not there (or no longer)
    """The row an operation changes does not exist, or vanished between a tool's check and its write (another
    call, on this replica or another, deleted it); nothing was written. A call answers `not_found`."""


class EventMissing(NotFound):
    def __init__(self, event_id: str) -> None:
        super().__init__(f"Event {event_id!r} no longer exists (it was deleted meanwhile); nothing was changed")
        self.event_id = event_id


class InvitationMissing(NotFound):
    def __init__(self, event_id: str, user_id: str) -> None:
        super().__init__(f"{user_id} is not invited to {event_id}")
        self.event_id = event_id
        self.user_id = user_id
