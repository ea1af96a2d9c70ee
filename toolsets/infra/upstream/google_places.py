"""Google Places API (New) Text Search over httpx.

`POST https://places.googleapis.com/v1/places:searchText` with the key in `X-Goog-Api-Key` and
the returned fields named in `X-Goog-FieldMask` (Google bills by the fields asked for, and a
request without a mask is rejected). Every failure becomes a `ToolError` the model can act on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolsets.core.errors import ErrorCode, ToolError
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

logger = logging.getLogger("truloop.places")

SEARCH_TEXT_URL = "https://places.googleapis.com/v1/places:searchText"
API_KEY_ENV = "GOOGLE_MAPS_API_KEY"
FIELD_MASK = ",".join(
    (
        "places.id",
        "places.displayName",
        "places.formattedAddress",
        "places.location",
        "places.rating",
        "places.userRatingCount",
        "places.googleMapsUri",
        "places.types",
        "places.businessStatus",
        "places.priceLevel",
        "places.currentOpeningHours.openNow",
    )
)
MAX_RADIUS_M = 50_000
MAX_PAGE_SIZE = 20
READ_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 5.0
# One resend after a 5xx or a timeout; a 429 goes straight back, so the model can wait and decide.
RETRY = RetryPolicy(attempts=2, statuses=frozenset({500, 502, 503, 504}), base_delay=0.25)
ACTION = "search for places"
SERVICE = UpstreamService(
    name="Google Places",
    key_variable=API_KEY_ENV,
    fix_key=(
        "The key is invalid, restricted, or the Places API (New) is not enabled for its Google Cloud project; "
        "tell the user place search is unavailable until the operator fixes the key."
    ),
    retry_later="the search may be retried in a moment",
    change_request="Change the query or the location, radius or language arguments and try again.",
)


@dataclass(frozen=True, slots=True)
class LatLng:
    latitude: float
    longitude: float


@dataclass(frozen=True, slots=True)
class FoundPlace:
    """One place of a search, with the fields of `FIELD_MASK`; absent fields are None."""

    place_id: str
    name: str
    address: str | None
    location: LatLng | None
    rating: float | None
    rating_count: int | None
    maps_url: str | None
    types: tuple[str, ...]
    business_status: str | None
    price_level: str | None
    open_now: bool | None


class PlacesClient:
    def __init__(
        self,
        api_key: SecretStr | None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self._api_key = api_key
        self._transport = transport
        self._sleep = sleep

    async def search_text(
        self,
        query: str,
        *,
        center: LatLng | None = None,
        radius_m: float | None = None,
        language: str | None = None,
        page_size: int = 10,
    ) -> list[FoundPlace]:
        """Places matching `query`, ranked by Google; `center` + `radius_m` bias (not restrict) the area."""
        key = self._api_key.get_secret_value().strip() if self._api_key is not None else ""
        if not key:
            raise ToolError(
                f"Place search is not configured: set {API_KEY_ENV} to a Google Maps Platform API key with the "
                "Places API (New) enabled, in the server's environment. Tell the user place search is unavailable.",
                code=ErrorCode.NOT_CONFIGURED,
            )
        body: dict[str, Any] = {"textQuery": query, "pageSize": max(1, min(page_size, MAX_PAGE_SIZE))}
        if center is not None:
            radius = float(radius_m if radius_m is not None else MAX_RADIUS_M)
            body["locationBias"] = {
                "circle": {
                    "center": {"latitude": center.latitude, "longitude": center.longitude},
                    "radius": min(radius, MAX_RADIUS_M),
                }
            }
        if language:
            body["languageCode"] = language
        headers = {"X-Goog-Api-Key": key, "X-Goog-FieldMask": FIELD_MASK, "Content-Type": "application/json"}
        response = await self._post(body, headers)
        if response.status_code != 200:
            raise _error_for(response, key)
        return _parse_places(response)

    async def _post(self, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        import httpx

        from toolsets.infra.upstream.retry import retrying_client

        timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
        try:
            async with retrying_client(self._transport, RETRY, sleep=self._sleep, timeout=timeout) as client:
                # a search changes nothing, so resending it is safe
                return await client.post(SEARCH_TEXT_URL, json=body, headers=headers, extensions={RETRY_SAFE: True})
        except httpx.TransportError as exc:
            raise transport_failure(SERVICE, exc, action=ACTION) from None


def _google_error(response: httpx.Response) -> tuple[str, str, str]:
    """(message, status, reason) of Google's `{"error": {"code", "message", "status", "details": [{"reason"}]}}`."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return "", "", ""
    if not isinstance(error, dict):
        return "", "", ""
    reasons = [d.get("reason") for d in error.get("details") or [] if isinstance(d, dict) and d.get("reason")]
    message = str(error.get("message") or "")
    return message, str(error.get("status") or ""), str(reasons[0]) if reasons else ""


def _error_for(response: httpx.Response, key: str) -> ToolError:
    status = response.status_code
    message, google_status, reason = _google_error(response)
    message = clip(redact(message, key))
    logger.warning("places search failed: HTTP %d %s %s: %s", status, google_status, reason, message)
    label = " ".join(part for part in (str(status), google_status, reason) if part)
    # Google answers an unknown key with 400 INVALID_ARGUMENT + reason API_KEY_INVALID, not 401.
    key_problem = ErrorCode.UPSTREAM_AUTH if reason.startswith("API_KEY_") else None
    return status_failure(
        SERVICE, status, action=ACTION, detail=message or google_status, label=label, code=key_problem
    )


def _parse_places(response: httpx.Response) -> list[FoundPlace]:
    try:
        payload = response.json()
    except ValueError:
        logger.warning("places search returned a body that is not JSON")
        raise unreadable_answer(SERVICE, action=ACTION) from None
    raw_places = payload.get("places") if isinstance(payload, dict) else None
    # An empty result is `{}`: Google leaves out empty repeated fields.
    return [_place(raw) for raw in raw_places or [] if isinstance(raw, dict)]


def _object(value: Any) -> dict[str, Any]:
    """`value` when the upstream sent an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _place(raw: dict[str, Any]) -> FoundPlace:
    display = _object(raw.get("displayName"))
    address = _text(raw.get("formattedAddress"))
    place_id = _text(raw.get("id")) or ""
    loc = _object(raw.get("location"))
    location = None
    if isinstance(loc.get("latitude"), int | float) and isinstance(loc.get("longitude"), int | float):
        location = LatLng(float(loc["latitude"]), float(loc["longitude"]))
    hours = _object(raw.get("currentOpeningHours"))
    open_now = hours.get("openNow")
    rating = raw.get("rating")
    count = raw.get("userRatingCount")
    return FoundPlace(
        place_id=place_id,
        name=_text(display.get("text")) or address or place_id,
        address=address,
        location=location,
        rating=float(rating) if isinstance(rating, int | float) else None,
        rating_count=int(count) if isinstance(count, int) else None,
        maps_url=_text(raw.get("googleMapsUri")),
        types=tuple(t for t in raw.get("types") or [] if isinstance(t, str)),
        business_status=_enum(raw.get("businessStatus"), prefix=""),
        price_level=_enum(raw.get("priceLevel"), prefix="PRICE_LEVEL_"),
        open_now=open_now if isinstance(open_now, bool) else None,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _enum(value: Any, *, prefix: str) -> str | None:
    """`PRICE_LEVEL_MODERATE` -> `moderate`; the UNSPECIFIED value means unknown."""
    if not isinstance(value, str) or not value or value.endswith("UNSPECIFIED"):
        return None
    return value.removeprefix(prefix).lower()
