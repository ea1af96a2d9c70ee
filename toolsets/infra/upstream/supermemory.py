"""Memories kept in Supermemory (https://api.supermemory.ai), one container tag per user.

Uses the v4 memory endpoints, which store a fact as given (no extraction step) and make it
searchable at once: `POST /v4/memories` to save, `POST /v4/search` to search,
`DELETE /v4/memories` to forget. Each request names the caller's container tag, and
Supermemory scopes the operation to it, so a user can neither find nor forget another
user's memories: an id outside the tag is answered 404, like an id that never existed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from typing import TYPE_CHECKING, Any

from toolsets.infra.clock import now_iso
from toolsets.infra.store.memories import MemoryHit, MemoryRecord
from toolsets.infra.upstream.failures import (
    UpstreamService,
    clip,
    redact,
    status_failure,
    transport_failure,
    unreadable_answer,
)
from toolsets.infra.upstream.retry_policy import RETRY_SAFE, RetryPolicy, Sleep

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

logger = logging.getLogger("truloop.supermemory")

BASE_URL = "https://api.supermemory.ai"
TIMEOUT_SECONDS = 10.0
# Searches and forgets are resent once after a transient failure; a save only when it never left.
RETRY = RetryPolicy(attempts=2, base_delay=0.25, max_retry_after=5.0)
SERVICE = UpstreamService(
    name="Supermemory",
    key_variable="SUPERMEMORY_API_KEY",
    fix_key=(
        "Tell the user that memory is misconfigured: the operator must set SUPERMEMORY_API_KEY to a valid key "
        "(console.supermemory.ai), or unset it to use the built-in memory store."
    ),
    change_request="Change the request (shorter or plainer content, different tags) before trying again.",
)
# A save that timed out may still have landed upstream.
_MAY_HAVE_SAVED = "Before retrying, search_memories for it: it may already have been saved."


def container_tag(user_id: str) -> str:
    """The user's Supermemory space: a hash, because user ids may hold characters tags do not allow."""
    return "truloop_user_" + hashlib.sha256(user_id.encode()).hexdigest()[:40]


class SupermemoryMemories:
    def __init__(
        self,
        api_key: SecretStr,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep | None = None,
        base_url: str = BASE_URL,
    ) -> None:
        self._api_key = api_key
        self._transport = transport
        self._sleep = sleep
        self.base_url = base_url.rstrip("/")

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord:
        body = {
            "containerTag": container_tag(user_id),
            "memories": [{"content": content, "metadata": {"tags": list(tags), "source": "truloop"}}],
        }
        data = await self._request(
            "POST", "/v4/memories", body, action="save the memory", resend=False, after_timeout=_MAY_HAVE_SAVED
        )
        memories = data.get("memories") if isinstance(data, dict) else None
        if not memories or not isinstance(memories[0], dict) or not memories[0].get("id"):
            raise unreadable_answer(SERVICE, action="save the memory")
        saved = memories[0]
        return MemoryRecord(
            id=str(saved["id"]),
            content=str(saved.get("memory") or content),
            tags=_tags(saved.get("metadata")) or list(tags),
            created_at=_iso(saved.get("createdAt")),
        )

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        body = {"q": query, "containerTag": container_tag(user_id), "limit": limit, "searchMode": "memories"}
        data = await self._request("POST", "/v4/search", body, action="search memories", missing_ok=True)
        if data is None:  # the user's space does not exist yet: nothing saved
            return []
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise unreadable_answer(SERVICE, action="search memories")
        hits = [
            MemoryHit(
                record=MemoryRecord(
                    id=str(item["id"]),
                    content=str(item["memory"]),
                    tags=_tags(item.get("metadata")),
                    created_at=_iso(item.get("createdAt") or item.get("updatedAt")),
                ),
                score=float(item.get("similarity") or 0.0),
            )
            for item in results
            if isinstance(item, dict) and item.get("id") and item.get("memory")  # chunk results carry no memory
        ]
        hits.sort(key=lambda hit: hit.score, reverse=True)
        return hits[:limit]

    async def exists(self, user_id: str, memory_id: str) -> bool | None:
        return None  # the API has no look-up by id that is cheaper than the delete itself

    async def text_of(self, user_id: str, memory_id: str) -> str | None:
        return None  # as `exists`: no look-up by id that is cheaper than the delete; the question stays generic

    async def forget(self, user_id: str, memory_id: str) -> bool:
        body = {"containerTag": container_tag(user_id), "id": memory_id}
        data = await self._request("DELETE", "/v4/memories", body, action="forget the memory", missing_ok=True)
        return isinstance(data, dict) and data.get("forgotten") is True and data.get("id") == memory_id

    async def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        *,
        action: str,
        missing_ok: bool = False,
        resend: bool = True,
        after_timeout: str = "",
    ) -> Any:
        """The JSON answer; None for a 404 when `missing_ok`; otherwise every failure is a ToolError.
        `resend` says whether the request may be sent again after a transient failure."""
        import httpx

        from toolsets.infra.upstream.retry import retrying_client

        key = self._api_key.get_secret_value()
        headers = {"Authorization": f"Bearer {key}"}
        try:
            async with retrying_client(self._transport, RETRY, sleep=self._sleep, timeout=TIMEOUT_SECONDS) as client:
                response = await client.request(
                    method, self.base_url + path, json=body, headers=headers, extensions={RETRY_SAFE: resend}
                )
        except httpx.TransportError as exc:
            hint = after_timeout if isinstance(exc, httpx.TimeoutException) else ""
            raise transport_failure(SERVICE, exc, action=action, hint=hint) from None
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code >= 400:
            raise status_failure(SERVICE, response.status_code, action=action, detail=_detail(response, key))
        try:
            return response.json()
        except ValueError:
            raise unreadable_answer(SERVICE, action=action) from None


def _detail(response: httpx.Response, key: str) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        parts = [str(data[name]) for name in ("error", "details", "message") if data.get(name)]
        text = ": ".join(parts)
    else:
        text = response.text
    return clip(redact(text, key)) or response.reason_phrase or "no detail"


def _tags(metadata: Any) -> list[str]:
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return [str(tag) for tag in tags] if isinstance(tags, list) else []


def _iso(value: Any) -> str:
    """Supermemory's timestamps (`...Z`) as ISO 8601 with an explicit offset."""
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return now_iso()
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.isoformat()
    return now_iso()
