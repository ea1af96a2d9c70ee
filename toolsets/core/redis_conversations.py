"""Conversations of 2026-07-28 callers in Redis, so every replica enforces the same gates.

Keys (under the prefix): `conv:{key}:ok` the tools that succeeded, `conv:{key}:seen:{tool}` the
values seen in that tool's calls, `conv:{key}:loaded` the loaded toolsets; every one of them
expires `CONVERSATION_TTL_S` after the conversation was last used (a sliding TTL).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from toolsets.core.conversation import CONVERSATION_TTL_S, MAX_SEEN_VALUES
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.redis_client import redis_of

logger = logging.getLogger("truloop.conversations")

T = TypeVar("T")


class RedisConversations:
    def __init__(self, client: Any, *, prefix: str = "truloop:", ttl: int = CONVERSATION_TTL_S) -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py), or a URL to open one on."""
        self._redis = redis_of(client)
        self._prefix = prefix
        self._ttl = ttl

    def get(self, key: str) -> RedisConversation:
        return RedisConversation(self._redis, f"{self._prefix}conv:{key}", self._ttl)


class RedisConversation:
    def __init__(self, client: Any, base: str, ttl: int) -> None:
        self._redis = client
        self._base = base
        self._ttl = ttl

    async def _guarded(self, work: Callable[[], Awaitable[T]]) -> T:
        try:
            return await work()
        except Exception as exc:
            logger.warning("conversation state unavailable: %s", type(exc).__name__)
            raise ToolError(
                "This server keeps what the conversation has done in its shared store (Redis), which is "
                "unreachable right now; nothing was run. Try again shortly.",
                code=ErrorCode.BRIDGE_UNAVAILABLE,
            ) from None

    async def succeeded(self, tools: Iterable[str]) -> bool:
        wanted = list(tools)

        async def check() -> bool:
            found = await self._redis.smismember(f"{self._base}:ok", wanted)
            return any(found)

        return bool(wanted) and await self._guarded(check)

    async def has_seen(self, tools: Iterable[str], value: str) -> bool:
        async def check() -> bool:
            async with self._redis.pipeline(transaction=False) as pipe:
                for tool in tools:
                    pipe.sismember(f"{self._base}:seen:{tool}", value)
                return any(await pipe.execute())

        return await self._guarded(check)

    async def record(self, tool: str, values: Iterable[str]) -> None:
        kept = list(dict.fromkeys(values))[-MAX_SEEN_VALUES:]

        async def write() -> None:
            seen = f"{self._base}:seen:{tool}"
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.sadd(f"{self._base}:ok", tool)
                pipe.expire(f"{self._base}:ok", self._ttl)
                if kept:
                    pipe.sadd(seen, *kept)
                    pipe.expire(seen, self._ttl)
                await pipe.execute()
            if kept and await self._redis.scard(seen) > MAX_SEEN_VALUES:
                await self._redis.spop(seen, len(kept))

        await self._guarded(write)

    async def loaded(self) -> frozenset[str]:
        async def read() -> frozenset[str]:
            return frozenset(await self._redis.smembers(f"{self._base}:loaded"))

        return await self._guarded(read)

    async def load(self, toolset: str) -> None:
        async def write() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.sadd(f"{self._base}:loaded", toolset)
                pipe.expire(f"{self._base}:loaded", self._ttl)
                await pipe.execute()

        await self._guarded(write)
