"""The user directory: its contract (`UserStore`, `UserRecord`) here; `sqlite` and `postgres` fulfil it,
`shared` holds what both compute the same way."""

from toolsets.infra.store.users.contract import UserRecord, UserStore

__all__ = ["UserRecord", "UserStore"]
