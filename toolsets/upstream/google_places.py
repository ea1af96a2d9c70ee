"""Google Places API (New) Text Search over httpx.

`POST https://places.googleapis.com/v1/places:searchText` with the key in `X-Goog-Api-Key` and
the returned fields named in `X-Goog-FieldMask` (Google bills by the fields asked for, and a
request without a mask is rejected). Every failure becomes a `ToolError` the model can act on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.errors import ToolError

if TYPE_CHECKING:
    import httpx

    from toolsets.services import Services

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
ATTEMPTS = 2  # the search changes nothing, so one retry after a 5xx or a timeout is safe
RETRY_DELAY_S = 0.25
_MESSAGE_LIMIT = 300
_UNAVAILABLE = "Google Places is unavailable ({detail}); the search may be retried in a moment."


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
    def __init__(self, services: Services) -> None:
        self._services = services

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
        key = self._services.secret(API_KEY_ENV)
        if key is None:
            raise ToolError(
                f"Place search is not configured: set {API_KEY_ENV} to a Google Maps Platform API key with the "
                "Places API (New) enabled, in the server's environment. Tell the user place search is unavailable.",
                code="not_configured",
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

        timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
        async with self._services.http_client(timeout=READ_TIMEOUT_S) as client:
            for attempt in range(1, ATTEMPTS + 1):
                last = attempt == ATTEMPTS
                try:
                    response = await client.post(SEARCH_TEXT_URL, json=body, headers=headers, timeout=timeout)
                except httpx.TimeoutException:
                    logger.warning("places search timed out (attempt %d of %d)", attempt, ATTEMPTS)
                    if last:
                        raise _unavailable("no answer in time") from None
                except httpx.TransportError as exc:
                    logger.warning("places search could not connect (attempt %d of %d): %s", attempt, ATTEMPTS, exc)
                    if last:
                        raise _unavailable("could not connect") from None
                else:
                    if response.status_code < 500 or last:
                        return response
                    logger.warning(
                        "places search got HTTP %d (attempt %d of %d)", response.status_code, attempt, ATTEMPTS
                    )
                await anyio.sleep(RETRY_DELAY_S)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _unavailable(detail: str) -> ToolError:
    return ToolError(_UNAVAILABLE.format(detail=detail), code="upstream_unavailable", retryable=True)


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


def _scrub(text: str, key: str) -> str:
    text = text.replace(key, "[redacted]")
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _error_for(response: httpx.Response, key: str) -> ToolError:
    status = response.status_code
    message, google_status, reason = _google_error(response)
    message = _scrub(message, key)
    logger.warning("places search failed: HTTP %d %s %s: %s", status, google_status, reason, message)
    # Google answers an unknown key with 400 INVALID_ARGUMENT + reason API_KEY_INVALID, not 401.
    if status in (401, 403) or reason.startswith("API_KEY_"):
        label = " ".join(part for part in (str(status), google_status, reason) if part)
        return ToolError(
            f"Google Places refused the API key in {API_KEY_ENV} (HTTP {label}): the key is invalid, restricted, "
            "or the Places API (New) is not enabled for its Google Cloud project. Retrying will not help; tell the "
            "user place search is unavailable until the operator fixes the key.",
            code="upstream_auth",
        )
    if status == 429:
        return ToolError(
            "Google Places rate limited this server (HTTP 429, too many requests or quota used up); "
            "wait a little before searching again.",
            code="rate_limited",
            retryable=True,
        )
    if status >= 500:
        return _unavailable(f"HTTP {status}")
    detail = message or google_status or "no reason given"
    return ToolError(
        f"Google Places rejected the search (HTTP {status}): {detail}. Change the query or the location, radius "
        "or language arguments and try again.",
        code="upstream_rejected",
    )


def _parse_places(response: httpx.Response) -> list[FoundPlace]:
    try:
        payload = response.json()
    except ValueError:
        logger.warning("places search returned a body that is not JSON")
        raise _unavailable("it sent an unreadable answer") from None
    raw_places = payload.get("places") if isinstance(payload, dict) else None
    # An empty result is `{}`: Google leaves out empty repeated fields.
    return [_place(raw) for raw in raw_places or [] if isinstance(raw, dict)]


def _place(raw: dict[str, Any]) -> FoundPlace:
    display = raw.get("displayName") if isinstance(raw.get("displayName"), dict) else {}
    address = _text(raw.get("formattedAddress"))
    place_id = _text(raw.get("id")) or ""
    loc = raw.get("location") if isinstance(raw.get("location"), dict) else {}
    location = None
    if isinstance(loc.get("latitude"), int | float) and isinstance(loc.get("longitude"), int | float):
        location = LatLng(float(loc["latitude"]), float(loc["longitude"]))
    hours = raw.get("currentOpeningHours") if isinstance(raw.get("currentOpeningHours"), dict) else {}
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
