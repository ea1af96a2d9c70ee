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

from toolsets.errors import ToolError
from toolsets.store.memories import MemoryHit, MemoryRecord, now_iso

if TYPE_CHECKING:
    import httpx

    from toolsets.services import Services

logger = logging.getLogger("truloop.supermemory")

BASE_URL = "https://api.supermemory.ai"
TIMEOUT_SECONDS = 10.0
_MAX_UPSTREAM_DETAIL = 300
# A save that timed out may still have landed upstream.
_MAY_HAVE_SAVED = " Before retrying, search_memories for it: it may already have been saved."


def container_tag(user_id: str) -> str:
    """The user's Supermemory space: a hash, because user ids may hold characters tags do not allow."""
    return "truloop_user_" + hashlib.sha256(user_id.encode()).hexdigest()[:40]


class SupermemoryMemories:
    def __init__(self, services: Services, api_key: str, *, base_url: str = BASE_URL) -> None:
        self.services = services
        self._api_key = api_key
        self.base_url = base_url.rstrip("/")

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord:
        body = {
            "containerTag": container_tag(user_id),
            "memories": [{"content": content, "metadata": {"tags": list(tags), "source": "truloop"}}],
        }
        data = await self._request(
            "POST", "/v4/memories", body, action="save the memory", after_timeout=_MAY_HAVE_SAVED
        )
        memories = data.get("memories") if isinstance(data, dict) else None
        if not memories or not isinstance(memories[0], dict) or not memories[0].get("id"):
            raise _unexpected_shape("save")
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
            raise _unexpected_shape("search")
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
        after_timeout: str = "",
    ) -> Any:
        """The JSON answer; None for a 404 when `missing_ok`; otherwise every failure is a ToolError."""
        import httpx

        headers = {"Authorization": f"Bearer {self._api_key}"}
        try:
            async with self.services.http_client(timeout=TIMEOUT_SECONDS) as client:
                response = await client.request(method, self.base_url + path, json=body, headers=headers)
        except httpx.TimeoutException:
            logger.warning("supermemory %s %s timed out", method, path)
            raise _unavailable(action, "did not answer in time", hint=after_timeout) from None
        except httpx.TransportError as exc:
            logger.warning("supermemory %s %s failed: %s", method, path, type(exc).__name__)
            raise _unavailable(action, "could not be reached") from None
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code >= 400:
            raise _status_error(response, action)
        try:
            return response.json()
        except ValueError:
            raise _unexpected_shape(action) from None


def _status_error(response: httpx.Response, action: str) -> ToolError:
    status = response.status_code
    logger.warning("supermemory answered HTTP %d to %s", status, action)
    if status in (401, 403):
        return ToolError(
            f"Supermemory rejected the SUPERMEMORY_API_KEY (HTTP {status}), so this server cannot {action}. "
            "Tell the user that memory is misconfigured: the operator must set SUPERMEMORY_API_KEY to a valid key "
            "(console.supermemory.ai), or unset it to use the built-in memory store.",
            code="upstream_auth",
        )
    if status == 429:
        return ToolError(
            f"Supermemory is rate limiting requests, so this server could not {action}; "
            "the call may be retried after a short wait.",
            code="upstream_rate_limited",
            retryable=True,
        )
    if status >= 500:
        return _unavailable(action, f"answered HTTP {status}")
    return ToolError(
        f"Supermemory refused to {action} (HTTP {status}: {_detail(response)}). "
        "Change the request (shorter or plainer content, different tags) before trying again.",
        code="upstream_rejected",
    )


def _unavailable(action: str, what: str, *, hint: str = "") -> ToolError:
    return ToolError(
        f"Supermemory is unavailable ({what}), so this server could not {action}; the call may be retried "
        f"in a moment.{hint}",
        code="upstream_unavailable",
        retryable=True,
    )


def _unexpected_shape(action: str) -> ToolError:
    return ToolError(
        f"Supermemory answered the request to {action} in a form this server does not understand; the call may be "
        "retried later, and the operator should check the server log.",
        code="upstream_error",
        retryable=True,
    )


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        parts = [str(data[key]) for key in ("error", "details", "message") if data.get(key)]
        text = ": ".join(parts)
    else:
        text = response.text
    return (text.strip() or response.reason_phrase or "no detail")[:_MAX_UPSTREAM_DETAIL]


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
