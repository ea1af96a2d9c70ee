"""Relayed messages: the contract (`InboxStore`, `InboxMessage`) and the rate limit's rules here;
`sqlite` and `postgres` fulfil it."""

from toolsets.infra.store.errors import RateLimited
from toolsets.infra.store.inbox.contract import InboxMessage, InboxStore
from toolsets.infra.store.inbox.shared import RateLimit

__all__ = ["InboxMessage", "InboxStore", "RateLimit", "RateLimited"]
