"""places toolset: search Google Places by text, optionally near a point."""

import math
import re
from typing import Annotated

from pydantic import BaseModel, Field

from toolsets.core.annotations import READ_ONLY_OPEN_WORLD
from toolsets.core.context import ToolContext
from toolsets.core.errors import ToolInputError
from toolsets.core.toolset import Toolset
from toolsets.infra.upstream.google_places import MAX_RADIUS_M, FoundPlace, LatLng
from toolsets.services import Services

places_toolset = Toolset("places")

DEFAULT_RADIUS_M = 5_000
PAGE_SIZE = 10
_LOCATION_EXAMPLE = "'37.5665,126.9780' (Seoul City Hall)"
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


class Place(BaseModel):
    place_id: str = Field(description="Google place id")
    name: str = Field(description="Display name of the place")
    address: str | None = Field(description="Full human-readable address, if known")
    latitude: float | None = Field(description="Latitude in degrees, if known")
    longitude: float | None = Field(description="Longitude in degrees, if known")
    rating: float | None = Field(description="Average user rating from 1.0 to 5.0, if rated")
    rating_count: int | None = Field(description="Number of user ratings, if known")
    maps_url: str | None = Field(description="Link that opens the place in Google Maps")
    open_now: bool | None = Field(description="Whether it is open right now; null when Google does not know")
    business_status: str | None = Field(
        description="operational, closed_temporarily or closed_permanently; null when unknown"
    )
    price_level: str | None = Field(description="free, inexpensive, moderate, expensive or very_expensive, if known")
    types: list[str] = Field(description="Google place types, e.g. cafe, restaurant")


class SearchPlacesResult(BaseModel):
    query: str = Field(description="The text query that was searched")
    location: str | None = Field(description="The 'lat,lng' the search was biased towards, if any")
    radius: int | None = Field(description="Radius in meters around location used as the bias, if any")
    count: int = Field(description="Number of places returned")
    places: list[Place] = Field(description="Matching places, best match first; empty when nothing matched")


@places_toolset.tool(hints=READ_ONLY_OPEN_WORLD)
async def search_places(
    ctx: ToolContext[Services],
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=300,
            description="What to look for, in words, e.g. 'quiet cafe in Seongsu' or 'pharmacy near Gangnam station'",
        ),
    ],
    location: Annotated[
        str | None,
        Field(
            description="Optional center to prefer results near, as 'latitude,longitude' in decimal degrees, "
            "e.g. '37.5665,126.9780'. Omit when the query already names the area."
        ),
    ] = None,
    radius: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_RADIUS_M,
            description=f"Optional radius in meters around location (1 to {MAX_RADIUS_M}); only with location. "
            f"Defaults to {DEFAULT_RADIUS_M} when location is given.",
        ),
    ] = None,
    language: Annotated[
        str | None,
        Field(description="Optional language of names and addresses, a BCP-47 code such as 'ko', 'en' or 'ja'"),
    ] = None,
) -> SearchPlacesResult:
    """Search Google Maps for real-world places (restaurants, cafes, shops, venues, landmarks, addresses).

    Use it to find where to meet, a venue's address, rating, opening status or Maps link. Results near
    `location` rank higher but are not limited to it. Returns up to 10 places, best match first.
    """
    text = query.strip()
    if not text:
        raise ToolInputError("query must describe what to look for, e.g. 'ramen near Hongdae'; it was blank.")
    center = _parse_location(location) if location is not None else None
    if radius is not None and center is None:
        raise ToolInputError(
            f"radius only applies around a location: also pass location as 'latitude,longitude', e.g. "
            f"{_LOCATION_EXAMPLE}, or leave radius out."
        )
    radius_m = (radius or DEFAULT_RADIUS_M) if center is not None else None
    lang = _parse_language(language) if language is not None else None

    found = await ctx.deps.places.search_text(
        text, center=center, radius_m=radius_m, language=lang, page_size=PAGE_SIZE
    )
    places = [_place(item) for item in found]
    return SearchPlacesResult(
        query=text,
        location=f"{center.latitude},{center.longitude}" if center is not None else None,
        radius=radius_m,
        count=len(places),
        places=places,
    )


def _parse_location(value: str) -> LatLng:
    parts = [part.strip() for part in value.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError(value)
        latitude, longitude = float(parts[0]), float(parts[1])
    except ValueError:
        raise ToolInputError(
            f"location must be 'latitude,longitude' in decimal degrees, e.g. {_LOCATION_EXAMPLE}; got {value!r}."
        ) from None
    if not (
        math.isfinite(latitude) and -90 <= latitude <= 90 and math.isfinite(longitude) and -180 <= longitude <= 180
    ):
        raise ToolInputError(
            "location is out of range: latitude must be between -90 and 90 and longitude between -180 and 180, "
            f"e.g. {_LOCATION_EXAMPLE}; got {value!r}."
        )
    return LatLng(latitude, longitude)


def _parse_language(value: str) -> str:
    text = value.strip()
    if not _LANGUAGE.match(text):
        raise ToolInputError(
            f"language must be a BCP-47 language code such as 'ko', 'en', 'ja' or 'zh-TW'; got {value!r}."
        )
    return text


def _place(found: FoundPlace) -> Place:
    return Place(
        place_id=found.place_id,
        name=found.name,
        address=found.address,
        latitude=found.location.latitude if found.location else None,
        longitude=found.location.longitude if found.location else None,
        rating=found.rating,
        rating_count=found.rating_count,
        maps_url=found.maps_url,
        open_now=found.open_now,
        business_status=found.business_status,
        price_level=found.price_level,
        types=list(found.types),
    )
