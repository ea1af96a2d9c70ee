"""The one Redis client of a deployment (pending calls, presence, wake-ups, conversations, canary state).

A blocking pool: past its size a command waits for a connection instead of failing at once (redis-py's
default pool raises MaxConnectionsError beyond its limit). The pub/sub listener takes one connection of it.
"""

from __future__ import annotations

from typing import Any

MAX_CONNECTIONS = 64


def open_redis(url: str) -> Any:
    """A `redis.asyncio.Redis` on `url` (no connection is made until its first command)."""
    import redis.asyncio as redis

    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=MAX_CONNECTIONS, timeout=5, decode_responses=True, socket_connect_timeout=2,
        socket_timeout=5, health_check_interval=15, retry_on_timeout=False,
    )  # fmt: skip
    return redis.Redis(connection_pool=pool)


def redis_of(client_or_url: Any) -> Any:
    """A client given, or one opened on a URL (a component used on its own: a test, a benchmark, a command)."""
    return open_redis(client_or_url) if isinstance(client_or_url, str) else client_or_url
