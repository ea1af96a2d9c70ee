"""Callers enter the user directory on first use, from their token's claims (without a token, by id alone)."""

from __future__ import annotations

from toolsets.core.context import Caller
from toolsets.infra.store.users import UserStore


async def enter_directory(users: UserStore, caller: Caller) -> None:
    await users.ensure_from_claims(dict(caller.claims) or {"sub": caller.user_id}, caller.role)
