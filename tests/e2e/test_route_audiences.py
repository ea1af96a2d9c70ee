"""Each route takes tokens for its own resource (docs/sign-in.md, docs/metrics.md), over a real
`truloop-mcp --transport http` with only the static secret (no `--jwt-audience`):

- `/metrics` refuses an operator token whose audience is `/sse` (401, naming what it takes) and reads with one for
  `/mcp`, the resource it belongs to;
- `truloop-mcp token --url` mints the audience of the route it names: `.../sse` the `/sse` resource (a `GET /sse`
  opens with it), `.../metrics` the `/mcp` resource (`/metrics` reads with it).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from tests.support import SECRET, TRULOOP, child_env, spawn_http_server

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def static() -> Iterator[tuple[str, dict[str, str]]]:
    env = {**child_env(), "TRULOOP_JWT_SECRET": SECRET}  # no --jwt-audience: the resource URLs only
    with spawn_http_server(env=env) as base:
        yield base, env


def operator_for(audience: str) -> str:
    now = int(time.time())
    claims = {"sub": "ops", "role": "operator", "aud": audience, "iat": now, "exp": now + 300}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def minted(url: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [TRULOOP, "token", "--user", "ops", "--role", "operator", "--url", url],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def audience_of(token: str) -> str:
    audience: str = jwt.decode(token, options={"verify_signature": False})["aud"]
    return audience


def scrape(base: str, bearer: str) -> httpx.Response:
    return httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {bearer}"}, timeout=10)


def sse_opens(base: str, bearer: str) -> int:
    headers = {"Authorization": f"Bearer {bearer}", "Accept": "text/event-stream"}
    with httpx.stream("GET", f"{base}/sse", headers=headers, timeout=10) as response:
        return response.status_code


def test_metrics_refuses_an_operator_token_for_sse_and_reads_with_its_own(static: tuple[str, dict[str, str]]) -> None:
    base, _ = static
    refused = scrape(base, operator_for(f"{base}/sse"))
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "invalid_token"
    assert f"{base}/mcp" in refused.json()["error_description"]
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    assert scrape(base, operator_for(f"{base}/mcp")).status_code == 200
    assert sse_opens(base, operator_for(f"{base}/sse")) == 200  # the /sse token is good where it is for


def test_token_url_mints_the_audience_of_the_route_it_names(static: tuple[str, dict[str, str]]) -> None:
    base, env = static
    for_sse = minted(f"{base}/sse", env)
    assert audience_of(for_sse) == f"{base}/sse"
    assert sse_opens(base, for_sse) == 200
    assert scrape(base, for_sse).status_code == 401
    for_metrics = minted(f"{base}/metrics", env)
    assert audience_of(for_metrics) == f"{base}/mcp"
    assert scrape(base, for_metrics).status_code == 200
    assert audience_of(minted(f"{base}/messages/", env)) == f"{base}/sse"
