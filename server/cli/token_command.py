"""`truloop-mcp token --user ID [--role R] [--groups G] [--ttl 1h] [--url URL]`: mint a bearer token for the
configured static secret (TRULOOP_JWT_SECRET), for a host's configuration or a device. Prints only the token.
`--zoneinfo ZONE` and `--locale TAG` add the user's zone and language (OpenID Connect's claims), checked first.

Its audience is the resource of the route `--url` names (a running server's URL, e.g. the one a `--port 0` server
printed): `.../mcp` and `.../metrics` (which belongs to it) the main resource, `.../notification-safe/mcp` that
surface's, `.../sse` and `.../messages/` the legacy SSE resource, a bare base URL the main one. Else the first
`--jwt-audience`, else this server's resource URL (`--public-url` or `http://--host:--port`, plus `/mcp`): the
same settings the server runs with give the token it accepts.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

from server.cli.shared import PROG, OneLineParser, add_setting_flags, fail, settings_or_exit
from toolsets.core.roles import TOKEN_ROLES
from toolsets.infra.locality import Locality

AUDIENCE_SETTINGS = ("host", "port", "public_url", "jwt_audience")  # what the token's `aud` is built from
TTL = re.compile(r"(\d+)\s*([smhd]?)")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_TTL = 366 * 86400


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=f"{PROG} token",
        description="Mint an HS256 bearer token signed with TRULOOP_JWT_SECRET; prints only the token.",
    )
    parser.add_argument("--user", required=True, metavar="ID", help="the token's subject (sub): the user id")
    parser.add_argument(
        "--role",
        choices=TOKEN_ROLES,
        default="member",
        help="the role (default: member; operator: a member who may also read /metrics)",
    )
    parser.add_argument("--groups", metavar="G", help="comma-separated groups (the groups claim)")
    parser.add_argument(
        "--zoneinfo", metavar="ZONE", help="the user's IANA time zone, e.g. Asia/Seoul (the zoneinfo claim)"
    )
    parser.add_argument(
        "--locale", metavar="TAG", help="the user's language, a BCP 47 tag, e.g. ko-KR (the locale claim)"
    )
    parser.add_argument("--ttl", default="1h", metavar="DURATION", help="lifetime: 90s, 30m, 1h, 7d (default: 1h)")
    parser.add_argument(
        "--url",
        metavar="URL",
        help="the running server's URL of the route the token is for (/mcp, /sse, /metrics, ...; as it printed it: "
        "serving http://127.0.0.1:PORT/mcp): its resource is the token's audience",
    )
    add_setting_flags(parser, only=AUDIENCE_SETTINGS)
    return parser


def ttl_seconds(text: str) -> int:
    found = TTL.fullmatch(text.strip().lower())
    seconds = int(found.group(1)) * UNIT_SECONDS[found.group(2)] if found else 0
    if not 0 < seconds <= MAX_TTL:
        fail(f"--ttl {text!r}: give a duration such as 90s, 30m, 1h or 7d (at most 366d)")
    return seconds


def stated_locality(zone: str | None, tag: str | None) -> Locality:
    """The `zoneinfo` and `locale` claims asked for, checked as the server reads them (a bad one is refused here:
    the server would ignore it)."""
    from toolsets.infra.locality import locale_or_none, zone_or_none

    if zone is not None and zone_or_none(zone) is None:
        fail(f"--zoneinfo {zone!r}: give an IANA time zone such as Asia/Seoul, Europe/Berlin or UTC")
    if tag is not None and locale_or_none(tag) is None:
        fail(f"--locale {tag!r}: give a BCP 47 language tag such as ko-KR, en-US or en")
    return Locality(zone_or_none(zone), locale_or_none(tag))


def url_audience(url: str) -> str:
    """The resource (the audience) of the route a server's URL names (server.auth.protected_resource.Resources); a URL
    naming none is the server's base, whose main resource it is."""
    from urllib.parse import urlsplit

    from server.auth.protected_resource import Resources

    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        fail(f"--url {url!r}: give the server's URL, e.g. http://127.0.0.1:8000/mcp")
    text = text.rstrip("/")
    for route, surface in ROUTES:
        if text.endswith(route):
            return getattr(Resources.at(text.removesuffix(route)), surface).url
    return Resources.at(text).main.url


# a route's path (the longest first) -> the surface of Resources whose tokens it takes
ROUTES = (
    ("/notification-safe/mcp", "safe"),
    ("/mcp", "main"),
    ("/metrics", "main"),
    ("/sse", "sse"),
    ("/messages", "sse"),
)


def run(argv: Sequence[str]) -> None:
    args = _parser().parse_args(list(argv))
    settings = settings_or_exit({name: getattr(args, name) for name in AUDIENCE_SETTINGS if hasattr(args, name)})
    if settings.jwt_secret is None:
        fail("set TRULOOP_JWT_SECRET (the server's secret) to mint a token for it")
    if not args.user.strip():
        fail("--user must name a user id")
    lifetime = ttl_seconds(args.ttl)
    place = stated_locality(args.zoneinfo, args.locale)
    if args.url:
        audience = url_audience(args.url)
    elif settings.jwt_audience:
        audience = settings.jwt_audience[0]
    elif settings.public_url is None and settings.port == 0:
        fail("with --port 0 the server's URL is not known here: pass --url (the URL the server printed)")
    else:
        from server.auth.protected_resource import Resources, public_base

        audience = Resources.at(public_base(settings)).main.url
    import jwt

    now = int(time.time())
    claims: dict[str, Any] = {"sub": args.user.strip(), "role": args.role, "aud": audience, "iat": now}
    claims["exp"] = now + lifetime
    if args.groups:
        claims["groups"] = [group.strip() for group in args.groups.split(",") if group.strip()]
    if place.timezone is not None:
        claims["zoneinfo"] = place.timezone
    if place.locale is not None:
        claims["locale"] = place.locale
    if settings.jwt_issuer:
        claims["iss"] = settings.jwt_issuer
    sys.stdout.write(jwt.encode(claims, settings.jwt_secret.get_secret_value(), algorithm="HS256") + "\n")
