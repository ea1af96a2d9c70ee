"""search_places through the MCP client in both eras, with Google Places (New) mocked by httpx.MockTransport."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from pydantic import SecretStr

from tests import support
from tests.support import MODES, server_for, services_for
from toolsets.infra.upstream.keys import UpstreamKeys

KEY = "test-key-AIzaSyNotARealKey123"
URL = "https://places.googleapis.com/v1/places:searchText"

# Shaped like a real places:searchText answer with the tool's field mask.
SEOUL_CAFES = {
    "places": [
        {
            "id": "ChIJN1t_tDeuEmsRUsoyG83frY4",
            "types": ["cafe", "coffee_shop", "food", "point_of_interest", "establishment"],
            "formattedAddress": "Seoul, Seongdong-gu, Seongsui-ro 7-gil, 12 1F, South Korea",
            "location": {"latitude": 37.5446123, "longitude": 127.0557231},
            "rating": 4.5,
            "googleMapsUri": "https://maps.google.com/?cid=1234567890123456789",
            "businessStatus": "OPERATIONAL",
            "priceLevel": "PRICE_LEVEL_MODERATE",
            "userRatingCount": 1287,
            "displayName": {"text": "Onion Seongsu", "languageCode": "en"},
            "currentOpeningHours": {"openNow": True},
        },
        {
            "id": "ChIJ2eUgeAK6j4ARbn5u_wAGqWA",
            "types": ["cafe", "food", "establishment"],
            "formattedAddress": "Seoul, Seongdong-gu, Yeonmujang-gil, 5, South Korea",
            "location": {"latitude": 37.5431, "longitude": 127.0563},
            "googleMapsUri": "https://maps.google.com/?cid=987654321",
            "businessStatus": "CLOSED_TEMPORARILY",
            "displayName": {"text": "Daelim Changgo", "languageCode": "en"},
        },
    ]
}


def google_error(code: int, status: str, message: str, reason: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if reason:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
                "metadata": {"service": "places.googleapis.com"},
            }
        ]
    return {"error": error}


class Google:
    """A fake places.googleapis.com that records every request it is sent."""

    def __init__(self, answer: Callable[[httpx.Request], httpx.Response]) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answer(request)

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


def replying(status: int, payload: Any) -> Google:
    return Google(lambda request: httpx.Response(status, json=payload))


async def search(tmp_path: Path, google: Google, mode: str, args: dict[str, Any], *, key: str | None = KEY) -> Any:
    keys = UpstreamKeys(google_maps=SecretStr(key)) if key is not None else UpstreamKeys()
    services = services_for(tmp_path, transport=httpx.MockTransport(google), keys=keys)
    async with Client(server_for(services=services), mode=mode) as client:
        return await client.call_tool("search_places", args)


def text_of(result: Any) -> str:
    return " ".join(block.text for block in result.content)


def error_of(result: Any) -> dict[str, Any]:
    envelope = support.error_of(result)
    assert KEY not in text_of(result) and KEY not in json.dumps(envelope)
    return envelope


@pytest.mark.anyio
@MODES
async def test_finds_places_and_sends_a_well_formed_request(tmp_path: Path, mode: str) -> None:
    google = replying(200, SEOUL_CAFES)
    args = {"query": "cafe in Seongsu", "location": "37.5446, 127.0557", "radius": 1500, "language": "en"}
    result = await search(tmp_path, google, mode, args)

    assert not result.is_error
    data = result.structured_content
    assert data is not None
    assert data["query"] == "cafe in Seongsu" and data["count"] == 2
    assert data["location"] == "37.5446,127.0557" and data["radius"] == 1500
    first, second = data["places"]
    assert first == {
        "place_id": "ChIJN1t_tDeuEmsRUsoyG83frY4",
        "name": "Onion Seongsu",
        "address": "Seoul, Seongdong-gu, Seongsui-ro 7-gil, 12 1F, South Korea",
        "latitude": 37.5446123,
        "longitude": 127.0557231,
        "rating": 4.5,
        "rating_count": 1287,
        "maps_url": "https://maps.google.com/?cid=1234567890123456789",
        "open_now": True,
        "business_status": "operational",
        "price_level": "moderate",
        "types": ["cafe", "coffee_shop", "food", "point_of_interest", "establishment"],
    }
    assert second["name"] == "Daelim Changgo" and second["business_status"] == "closed_temporarily"
    assert second["rating"] is None and second["open_now"] is None and second["price_level"] is None
    assert KEY not in text_of(result)

    (request,) = google.requests
    assert request.method == "POST" and str(request.url) == URL
    assert request.headers["X-Goog-Api-Key"] == KEY
    mask = request.headers["X-Goog-FieldMask"].split(",")
    for field in ("places.id", "places.displayName", "places.formattedAddress", "places.location", "places.rating"):
        assert field in mask
    assert "*" not in request.headers["X-Goog-FieldMask"]
    assert request.headers["Content-Type"] == "application/json"
    body = google.body()
    assert body["textQuery"] == "cafe in Seongsu"
    assert body["languageCode"] == "en"
    assert 1 <= body["pageSize"] <= 20
    assert body["locationBias"] == {
        "circle": {"center": {"latitude": 37.5446, "longitude": 127.0557}, "radius": 1500.0}
    }
    assert "key" not in request.url.params  # the key travels in the header only


@pytest.mark.anyio
@MODES
async def test_without_location_no_bias_or_language_is_sent(tmp_path: Path, mode: str) -> None:
    google = replying(200, SEOUL_CAFES)
    result = await search(tmp_path, google, mode, {"query": "  Namsan Tower  "})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["query"] == "Namsan Tower"
    assert result.structured_content["location"] is None and result.structured_content["radius"] is None
    body = google.body()
    assert body["textQuery"] == "Namsan Tower"
    assert "locationBias" not in body and "languageCode" not in body


@pytest.mark.anyio
@MODES
async def test_location_without_radius_uses_the_default_radius(tmp_path: Path, mode: str) -> None:
    google = replying(200, SEOUL_CAFES)
    result = await search(tmp_path, google, mode, {"query": "pharmacy", "location": "-33.8688,151.2093"})
    assert result.structured_content is not None and result.structured_content["radius"] == 5000
    assert google.body()["locationBias"]["circle"] == {
        "center": {"latitude": -33.8688, "longitude": 151.2093},
        "radius": 5000.0,
    }


@pytest.mark.anyio
@MODES
async def test_no_match_is_an_empty_list_not_an_error(tmp_path: Path, mode: str) -> None:
    google = replying(200, {})  # Google leaves `places` out when nothing matched
    result = await search(tmp_path, google, mode, {"query": "zzqx unlikely place"})
    assert not result.is_error
    assert result.structured_content == {
        "query": "zzqx unlikely place",
        "location": None,
        "radius": None,
        "count": 0,
        "places": [],
    }


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("key", [None, "  "])
async def test_missing_key_names_the_variable_and_sends_nothing(tmp_path: Path, mode: str, key: str | None) -> None:
    google = replying(200, SEOUL_CAFES)
    result = await search(tmp_path, google, mode, {"query": "cafe"}, key=key)
    error = error_of(result)
    assert error["code"] == "not_configured" and error["retryable"] is False
    assert "set GOOGLE_MAPS_API_KEY" in error["reason"]
    assert google.requests == []


@pytest.mark.anyio
@MODES
async def test_bad_request_says_what_google_objected_to(tmp_path: Path, mode: str) -> None:
    message = "Invalid value at 'location_bias.circle.radius' (TYPE_DOUBLE), \"abc\""
    google = replying(400, google_error(400, "INVALID_ARGUMENT", message))
    error = error_of(await search(tmp_path, google, mode, {"query": "cafe"}))
    assert error["code"] == "upstream_rejected" and error["retryable"] is False
    assert "location_bias.circle.radius" in error["reason"]
    assert len(google.requests) == 1


@pytest.mark.anyio
@MODES
async def test_an_invalid_key_is_reported_as_a_key_problem_without_echoing_it(tmp_path: Path, mode: str) -> None:
    # What Google answers to an unknown key: 400, not 401; the message may quote the key back.
    message = f"API key not valid: {KEY}. Please pass a valid API key."
    google = replying(400, google_error(400, "INVALID_ARGUMENT", message, "API_KEY_INVALID"))
    error = error_of(await search(tmp_path, google, mode, {"query": "cafe"}))
    assert error["code"] == "upstream_auth" and error["retryable"] is False
    assert "GOOGLE_MAPS_API_KEY" in error["reason"]


@pytest.mark.anyio
async def test_the_key_never_reaches_the_logs_or_an_echoed_google_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    message = f"Request contains an invalid argument near key={KEY}"
    google = replying(400, google_error(400, "INVALID_ARGUMENT", message))
    with caplog.at_level(logging.DEBUG):
        error = error_of(await search(tmp_path, google, "auto", {"query": "cafe"}))
    assert error["code"] == "upstream_rejected" and "[redacted]" in error["reason"]
    assert "invalid argument" in error["reason"]
    assert "places search failed" in caplog.text
    assert KEY not in caplog.text


@pytest.mark.anyio
@MODES
async def test_forbidden_says_the_key_or_the_api_is_the_problem(tmp_path: Path, mode: str) -> None:
    message = (
        "Places API (New) has not been used in project 123456789 before or it is disabled. Enable it by visiting "
        "https://console.developers.google.com/apis/api/places.googleapis.com/overview?project=123456789 then retry."
    )
    google = replying(403, google_error(403, "PERMISSION_DENIED", message, "SERVICE_DISABLED"))
    error = error_of(await search(tmp_path, google, mode, {"query": "cafe"}))
    assert error["code"] == "upstream_auth" and error["retryable"] is False
    assert "Places API (New) is not enabled" in error["reason"] and "SERVICE_DISABLED" in error["reason"]
    assert len(google.requests) == 1  # an auth failure is not retried


@pytest.mark.anyio
@MODES
async def test_rate_limited_is_retryable(tmp_path: Path, mode: str) -> None:
    google = replying(429, google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'SearchText'"))
    result = await search(tmp_path, google, mode, {"query": "cafe"})
    error = error_of(result)
    assert error["code"] == "upstream_rate_limited" and error["retryable"] is True  # the code all upstreams share
    assert "rate limited" in error["reason"]
    assert "may succeed if retried" in text_of(result)
    assert len(google.requests) == 1  # not resent: the model decides when to search again


@pytest.mark.anyio
@MODES
async def test_server_error_is_retried_once_then_reported_as_retryable(tmp_path: Path, mode: str) -> None:
    google = replying(500, google_error(500, "INTERNAL", "Internal error encountered."))
    error = error_of(await search(tmp_path, google, mode, {"query": "cafe"}))
    assert error["code"] == "upstream_unavailable" and error["retryable"] is True
    assert "Google Places is unavailable" in error["reason"] and "may be retried" in error["reason"]
    assert len(google.requests) == 2


@pytest.mark.anyio
@MODES
async def test_a_server_error_followed_by_success_returns_the_places(tmp_path: Path, mode: str) -> None:
    answers = iter(
        [httpx.Response(503, json=google_error(503, "UNAVAILABLE", "The service is currently unavailable."))]
    )
    google = Google(lambda request: next(answers, None) or httpx.Response(200, json=SEOUL_CAFES))
    result = await search(tmp_path, google, mode, {"query": "cafe"})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["count"] == 2
    assert len(google.requests) == 2


@pytest.mark.anyio
@MODES
async def test_timeout_is_retryable(tmp_path: Path, mode: str) -> None:
    def timing_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    google = Google(timing_out)
    error = error_of(await search(tmp_path, google, mode, {"query": "cafe"}))
    assert error["code"] == "upstream_unavailable" and error["retryable"] is True
    assert "Google Places is unavailable" in error["reason"]
    assert len(google.requests) == 2


@pytest.mark.anyio
@MODES
async def test_connect_error_is_retryable(tmp_path: Path, mode: str) -> None:
    def refusing(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    error = error_of(await search(tmp_path, Google(refusing), mode, {"query": "cafe"}))
    assert error["code"] == "upstream_unavailable" and error["retryable"] is True


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"query": "cafe", "location": "Seoul"}, "37.5665,126.9780"),
        ({"query": "cafe", "location": "37.5665"}, "37.5665,126.9780"),
        ({"query": "cafe", "location": "91,10"}, "between -90 and 90"),
        ({"query": "cafe", "location": "10,181"}, "between -180 and 180"),
        ({"query": "cafe", "location": "nan,10"}, "37.5665,126.9780"),
        ({"query": "cafe", "radius": 500}, "only applies around a location"),
        ({"query": "cafe", "location": "37.5,127", "radius": 0}, "radius"),
        ({"query": "cafe", "location": "37.5,127", "radius": 50001}, "50000"),
        ({"query": "cafe", "language": "korean please"}, "BCP-47"),
        ({"query": "cafe", "language": "k"}, "'ko'"),
        ({"query": "   "}, "blank"),
        ({"query": ""}, "query"),
    ],
)
async def test_bad_arguments_are_validation_errors_sent_nowhere(
    tmp_path: Path, mode: str, args: dict[str, Any], expected: str
) -> None:
    google = replying(200, SEOUL_CAFES)
    error = error_of(await search(tmp_path, google, mode, args))
    assert error["code"] == "validation"
    assert expected in error["reason"]
    assert google.requests == []


@pytest.mark.anyio
async def test_published_with_truthful_hints(tmp_path: Path) -> None:
    async with Client(server_for(services=services_for(tmp_path))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools["search_places"]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
    assert tool.annotations.idempotent_hint is True and tool.annotations.open_world_hint is True
    properties = tool.input_schema["properties"]
    assert set(properties) == {"query", "location", "radius", "language"}
    assert tool.input_schema["required"] == ["query"]


@pytest.mark.anyio
async def test_notification_safe_profile_offers_place_search(tmp_path: Path) -> None:
    google = replying(200, SEOUL_CAFES)
    services = services_for(
        tmp_path, transport=httpx.MockTransport(google), keys=UpstreamKeys(google_maps=SecretStr(KEY))
    )
    async with Client(server_for("notification-safe", services=services)) as client:
        result = await client.call_tool("search_places", {"query": "cafe"})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["count"] == 2
