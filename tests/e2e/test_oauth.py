"""Sign-in by the MCP authorization spec, over real HTTP on 127.0.0.1.

- With `--oauth-issuer`, a test authorization server (tests/sign_in.py: Keycloak-style metadata and a JWKS)
  issues RS256/ES256 tokens; the product accepts the right audience and refuses another audience, another
  issuer, an unknown or rotated-out key, a bad signature and an expired token, each with its own
  `error_description`; a key rotation is picked up at its first token, and refetches are rate-limited.
- The 401 and the RFC 9728 metadata name the URL the server is really reachable at (the bound port after
  `--port 0`, or `--public-url` behind a proxy), per surface; the TypeScript SDK's OAuth discovery finds the
  authorization server from the 401 alone (tests/ts/oauth_discovery.mjs).
- With the static secret: `truloop-mcp token` mints a token the server accepts; other audiences, tokens
  without one, and numeric-string `exp`s in the past are refused; a device stream opened with a numeric-string
  `exp` closes at it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import jwt
import pytest
from pydantic import SecretStr

from server.auth.identity import JwtVerifier, RefusedTokenError
from server.auth.issuer_keys import IssuerKeys, discovery_urls
from server.http.asgi_app import build_http_app
from tests.e2e.test_typescript_hosts import RUN_TIMEOUT, TS_DIR, _need, _node_env, node_home  # noqa: F401 - a fixture
from tests.sign_in import ACCEPT, INIT, REALM_PATH, AuthorizationServer, PrefixProxy
from tests.support import (
    AUDIENCE,
    SECRET,
    TRULOOP,
    child_env,
    mcp_client,
    serve_in_process,
    settings,
    spawn_http_server,
    token,
)

DISCOVERY = TS_DIR / "oauth_discovery.mjs"


def initialize(url: str, bearer: str | None) -> httpx.Response:
    headers = dict(ACCEPT)
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer}"
    return httpx.post(url, json=INIT, headers=headers, timeout=15)


def description(response: httpx.Response) -> str:
    """The `error_description` of a 401's WWW-Authenticate header."""
    assert response.status_code == 401, (response.status_code, response.text)
    found = re.search(r'error_description="([^"]*)"', response.headers["www-authenticate"])
    assert found is not None and 'error="invalid_token"' in response.headers["www-authenticate"], response.headers
    return found.group(1)


def metadata_url(response: httpx.Response) -> str:
    found = re.search(r'resource_metadata="([^"]*)"', response.headers["www-authenticate"])
    assert found is not None, response.headers
    return found.group(1)


# -- an external authorization server (--oauth-issuer) ----------------------------------------------------------


class Deployment:
    def __init__(self, issuer: AuthorizationServer, base: str, rsa: str, ec: str) -> None:
        self.issuer, self.base, self.rsa, self.ec = issuer, base, rsa, ec

    @property
    def resource(self) -> str:
        return f"{self.base}/mcp"

    def member(self, kid: str | None = None, **claims: Any) -> str:
        claims = {"aud": self.resource, "realm_access": {"roles": ["offline_access", "member"]}, **claims}
        return self.issuer.mint(kid or self.rsa, **claims)


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    issuer = AuthorizationServer()
    rsa, ec = issuer.new_key("RSA"), issuer.new_key("EC")
    issuer.publish(rsa, ec)
    with issuer.running():
        flags = ("--oauth-issuer", issuer.issuer, "--oauth-role-claim", "realm_access.roles")
        with spawn_http_server(*flags, env=child_env()) as base:
            yield Deployment(issuer, base, rsa, ec)


def test_the_401_and_the_metadata_name_the_bound_port_and_the_issuer(deployment: Deployment) -> None:
    base = deployment.base
    assert not base.endswith(":0")
    for path, method in (("/mcp", "POST"), ("/notification-safe/mcp", "POST"), ("/sse", "GET")):
        refused = httpx.request(method, f"{base}{path}", json=INIT if method == "POST" else None, headers=ACCEPT)
        assert refused.status_code == 401
        # no token: no error code (RFC 6750 section 3.1), only where to read how to sign in
        assert refused.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource{path}"'
        )
        document = httpx.get(metadata_url(refused), timeout=10).json()
        assert document["resource"] == f"{base}{path}"
        assert document["authorization_servers"] == [deployment.issuer.issuer]
        assert document["bearer_methods_supported"] == ["header"]


@pytest.mark.anyio
async def test_a_token_for_this_server_is_accepted_and_its_role_claim_decides(deployment: Deployment) -> None:
    async with mcp_client(deployment.base, deployment.member()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" in names
    assert initialize(deployment.resource, deployment.member(deployment.ec)).status_code == 200  # ES256
    guest = deployment.member(realm_access={"roles": ["offline_access", "uma_authorization"]})
    async with mcp_client(deployment.base, guest) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" not in names  # no recognised role: a guest


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"aud": "https://another-service.example/api"}, "wrong audience: tokens for this server name {resource}"),
        ({"iss": "https://another-issuer.example/realms/truloop"}, "wrong issuer"),
        ({"exp": int(time.time()) - 120}, "token expired"),
        ({"aud": None}, "token has no audience (aud); mint one for this server (truloop-mcp token)"),
        ({"exp": None}, "token has no exp claim"),
    ],
    ids=["another-audience", "another-issuer", "expired", "no-audience", "no-exp"],
)
def test_a_token_not_for_this_server_is_refused_with_its_reason(
    deployment: Deployment, claims: dict[str, Any], expected: str
) -> None:
    refused = initialize(deployment.resource, deployment.member(**claims))
    assert description(refused) == expected.format(resource=deployment.resource)
    assert metadata_url(refused) == f"{deployment.base}/.well-known/oauth-protected-resource/mcp"


def test_an_expired_token_gets_the_specs_header(deployment: Deployment) -> None:
    refused = initialize(deployment.resource, deployment.member(exp=int(time.time()) - 120))
    assert refused.headers["www-authenticate"].startswith(
        'Bearer error="invalid_token", error_description="token expired", resource_metadata="'
    )
    assert refused.json() == {"error": "invalid_token", "error_description": "token expired"}


def test_forged_and_foreign_signatures_are_refused(deployment: Deployment) -> None:
    issuer = deployment.issuer
    stranger = issuer.new_key("RSA")  # never published
    forged = deployment.member(deployment.rsa, signed_by=stranger)
    assert description(initialize(deployment.resource, forged)) == "bad signature"
    assert description(initialize(deployment.resource, deployment.member(stranger))) == "unknown signing key"
    static = jwt.encode({"sub": "alice", "role": "member", "aud": deployment.resource}, SECRET, algorithm="HS256")
    assert description(initialize(deployment.resource, static)) == "signature algorithm 'HS256' is not accepted"


def test_a_notification_safe_token_reaches_only_its_surface(deployment: Deployment) -> None:
    safe = f"{deployment.base}/notification-safe/mcp"
    bearer = deployment.member(aud=safe)
    assert initialize(safe, bearer).status_code == 200
    assert description(initialize(deployment.resource, bearer)) == f"this token is for {safe} only"
    assert initialize(safe, deployment.member()).status_code == 200  # a /mcp token reaches the subset


@pytest.mark.anyio
async def test_an_issuers_operator_reads_the_metrics_and_is_a_member_to_the_tools(deployment: Deployment) -> None:
    operator = deployment.member(realm_access={"roles": ["offline_access", "operator"]})
    safe_only = deployment.member(aud=f"{deployment.base}/notification-safe/mcp")
    async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as http:
        readable, member, safe = [
            await http.get("/metrics", headers={"Authorization": f"Bearer {bearer}"})
            for bearer in (operator, deployment.member(), safe_only)
        ]
    assert readable.status_code == 200 and "truloop_store_up 1.0" in readable.text
    assert member.status_code == 403
    assert "this token is for" in description(safe)
    async with mcp_client(deployment.base, operator) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" in names


def test_a_key_rotation_is_picked_up_and_refetches_are_rate_limited() -> None:
    issuer = AuthorizationServer()
    old = issuer.new_key("RSA")
    issuer.publish(old)
    with issuer.running(), spawn_http_server("--oauth-issuer", issuer.issuer, env=child_env()) as base:
        resource = f"{base}/mcp"
        assert initialize(resource, issuer.mint(old, aud=resource)).status_code == 200
        assert issuer.jwks_requests == 1
        new = issuer.new_key("RSA")
        issuer.publish(new)  # the old key is rotated out
        assert initialize(resource, issuer.mint(new, aud=resource)).status_code == 200  # an unknown kid: refetched
        assert issuer.jwks_requests == 2
        rotated_out = issuer.mint(old, aud=resource, jti="fresh")  # not one the server has cached
        assert description(initialize(resource, rotated_out)) == "unknown signing key"
        made_up = issuer.mint("made-up-kid", signed_by=new, aud=resource)
        assert description(initialize(resource, made_up)) == "unknown signing key"
        assert issuer.jwks_requests == 2, "an unknown kid within the cooldown fetched the key set again"


@pytest.mark.anyio
async def test_issuer_keys_follow_rfc8414_check_the_issuer_and_refetch_after_the_cooldown() -> None:
    issuer = AuthorizationServer(style="rfc8414")
    first = issuer.new_key("EC")
    issuer.publish(first)
    issuer.base = "https://login.example"
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == f"/.well-known/oauth-authorization-server{REALM_PATH}":
            return httpx.Response(200, json=issuer.metadata())
        if request.url.path == f"{REALM_PATH}/protocol/openid-connect/certs":
            return httpx.Response(200, json=issuer.jwks())
        return httpx.Response(404)

    now = [1000.0]
    keys = IssuerKeys(issuer.issuer, clock=lambda: now[0], transport=httpx.MockTransport(answer))
    assert await keys.key_for(first, "ES256") is not None
    assert await keys.key_for(first, "RS256") is None  # an EC key never verifies another algorithm
    assert seen == [
        f"/.well-known/oauth-authorization-server{REALM_PATH}",
        f"{REALM_PATH}/protocol/openid-connect/certs",
    ]
    second = issuer.new_key("RSA")
    issuer.publish(second)
    assert await keys.key_for(second, "RS256") is not None  # first unknown kid: one refetch
    third = issuer.new_key("RSA")
    issuer.publish(third)
    assert await keys.key_for(third, "RS256") is None  # within the cooldown
    now[0] += IssuerKeys.REFETCH_COOLDOWN
    assert await keys.key_for(third, "RS256") is not None
    assert seen.count(f"{REALM_PATH}/protocol/openid-connect/certs") == 3

    cold = IssuerKeys(issuer.issuer, clock=lambda: now[0], transport=httpx.MockTransport(answer))
    before = seen.count(f"{REALM_PATH}/protocol/openid-connect/certs")
    assert await cold.key_for("made-up", "RS256") is None  # the first load is the only fetch
    assert seen.count(f"{REALM_PATH}/protocol/openid-connect/certs") == before + 1

    # configured with a trailing slash: the metadata found names the issuer without it, so it is not used
    impostor = IssuerKeys(issuer.issuer + "/", transport=httpx.MockTransport(answer))
    verifier = JwtVerifier(audiences=("x",), issuer_keys=impostor)
    with pytest.raises(RefusedTokenError, match="signing keys are unavailable"):
        await verifier.check(issuer.mint(third, aud="x"))


def test_discovery_urls_cover_rfc8414_and_openid_connect() -> None:
    assert discovery_urls("https://kc.example/realms/a") == [
        "https://kc.example/.well-known/oauth-authorization-server/realms/a",
        "https://kc.example/.well-known/openid-configuration/realms/a",
        "https://kc.example/realms/a/.well-known/openid-configuration",
    ]
    assert discovery_urls("https://tenant.auth0.example/") == [
        "https://tenant.auth0.example/.well-known/oauth-authorization-server",
        "https://tenant.auth0.example/.well-known/openid-configuration",
    ]


# -- a TypeScript-SDK host finds the authorization server from the 401 alone ------------------------------------


def discover(home: Path, server_url: str) -> dict[str, dict[str, Any]]:
    node = _need("node")
    done = subprocess.run(
        [node, str(DISCOVERY), server_url],
        cwd=TS_DIR,
        env=_node_env(home),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    steps = {line["step"]: line for line in map(json.loads, filter(str.strip, done.stdout.splitlines()))}
    assert done.returncode == 0, f"discovery failed:\n{done.stdout}\n{done.stderr}"
    return steps


def assert_discovered(steps: dict[str, dict[str, Any]], public: str, issuer: AuthorizationServer) -> str:
    """The checks on what the host found; returns the resource it asks the authorization server for."""
    assert steps["401"]["status"] == 401
    assert steps["401"]["resourceMetadataUrl"] == f"{urlsplit(public).scheme}://{urlsplit(public).netloc}" + (
        f"/.well-known/oauth-protected-resource{urlsplit(public).path}/mcp"
    )
    found = steps["discovery"]
    assert found["authorizationServerUrl"] == issuer.issuer and found["issuer"] == issuer.issuer
    assert found["resource"] == f"{public}/mcp" and found["authorizationServers"] == [issuer.issuer]
    assert steps["resource"]["selected"] == f"{public}/mcp"
    assert steps["auth"]["result"] == "REDIRECT"
    redirect = urlsplit(steps["auth"]["authorizationUrl"])
    assert f"{redirect.scheme}://{redirect.netloc}{redirect.path}" == issuer.metadata()["authorization_endpoint"]
    query = parse_qs(redirect.query)
    assert query["resource"] == [f"{public}/mcp"] and query["code_challenge_method"] == ["S256"]
    return query["resource"][0]


@pytest.mark.slow
def test_typescript_host_discovers_the_issuer_from_the_401_with_port_0(
    node_home: Path,  # noqa: F811 - the fixture
    deployment: Deployment,
) -> None:
    resource = assert_discovered(discover(node_home, deployment.resource), deployment.base, deployment.issuer)
    issued = deployment.issuer.mint(deployment.rsa, aud=resource, realm_access={"roles": ["member"]})
    assert initialize(deployment.resource, issued).status_code == 200


@pytest.mark.slow
def test_typescript_host_discovers_the_issuer_behind_a_proxy_with_public_url(
    node_home: Path,  # noqa: F811 - the fixture
) -> None:
    issuer = AuthorizationServer()
    kid = issuer.new_key("RSA")
    issuer.publish(kid)
    proxy = PrefixProxy("/truloop")
    with issuer.running(), proxy.running():
        flags = ("--oauth-issuer", issuer.issuer, "--public-url", proxy.public)
        with spawn_http_server(*flags, env=child_env()) as base:
            proxy.upstream = base
            resource = assert_discovered(discover(node_home, f"{proxy.public}/mcp"), proxy.public, issuer)
            issued = issuer.mint(kid, aud=resource, role="member")
            assert initialize(f"{proxy.public}/mcp", issued).status_code == 200
            assert description(initialize(f"{base}/mcp", issuer.mint(kid, aud=f"{base}/mcp"))).startswith(
                f"wrong audience: tokens for this server name {proxy.public}/mcp"
            )


# -- the static secret ------------------------------------------------------------------------------------------


def mint(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, "token", *args], env=env, capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def static() -> Iterator[tuple[str, dict[str, str]]]:
    env = {**child_env(), "TRULOOP_JWT_SECRET": SECRET}  # no --jwt-audience: the resource URL only
    with spawn_http_server(env=env) as base:
        yield base, env


@pytest.mark.anyio
async def test_truloop_token_mints_a_token_the_server_accepts(static: tuple[str, dict[str, str]]) -> None:
    base, env = static
    port = base.rsplit(":", 1)[1]
    minted = mint("--user", "alice", "--role", "member", "--ttl", "1h", "--port", port, env=env)
    assert minted.returncode == 0 and minted.stderr == "", minted.stderr
    assert re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+\n", minted.stdout), minted.stdout  # only the token
    claims = jwt.decode(minted.stdout.strip(), SECRET, algorithms=["HS256"], audience=f"{base}/mcp")
    assert claims["sub"] == "alice" and claims["role"] == "member" and 3590 <= claims["exp"] - claims["iat"] <= 3600
    async with mcp_client(base, minted.stdout.strip()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_day_of_week" in names


@pytest.mark.anyio
async def test_a_wrong_audience_says_how_to_mint_a_token_for_a_port_0_server(
    static: tuple[str, dict[str, str]],
) -> None:
    """`truloop-mcp token` without the server's port mints for another server; the refusal names the command that
    mints the right one, `--url` with the URL the server printed, and that one is accepted."""
    base, env = static
    resource = f"{base}/mcp"
    elsewhere = mint("--user", "alice", env=env)  # the default port: another server's audience
    refused = description(initialize(resource, elsewhere.stdout.strip()))
    hint = f"mint one with: truloop-mcp token --user ID --url {resource}"
    assert refused == f"wrong audience: tokens for this server name {resource}; {hint}"
    for url in (resource, base, base + "/"):
        minted = mint("--user", "alice", "--url", url, env=env)
        assert minted.returncode == 0, minted.stderr
        assert initialize(resource, minted.stdout.strip()).status_code == 200
    bad = mint("--user", "alice", "--url", "127.0.0.1:1234", env=env)
    assert bad.returncode == 2 and "--url" in bad.stderr


def test_static_tokens_for_another_audience_without_one_or_exp_or_expired_as_a_string_are_refused(
    static: tuple[str, dict[str, str]],
) -> None:
    base, _ = static
    resource = f"{base}/mcp"
    assert description(initialize(resource, token())).startswith("wrong audience")  # aud: truloop-tests
    assert description(initialize(resource, token(aud=None))).startswith("token has no audience")
    past = str(int(time.time()) - 120)
    assert description(initialize(resource, token(aud=resource, exp=past))) == "token expired"
    assert description(initialize(resource, token(aud=resource, exp="soon"))) == "exp is not a number"
    assert description(initialize(resource, token(aud=resource, exp=None))) == "token has no exp claim"
    assert initialize(resource, token(aud=resource, exp=str(int(time.time()) + 60))).status_code == 200


def test_static_metadata_names_no_authorization_server(static: tuple[str, dict[str, str]]) -> None:
    base, _ = static
    refused = initialize(f"{base}/mcp", None)
    document = httpx.get(metadata_url(refused), timeout=10).json()
    assert document == {
        "resource": f"{base}/mcp",
        "bearer_methods_supported": ["header"],
        "resource_name": "truloop-mcp",
    }


def test_truloop_token_says_what_is_missing_in_one_line() -> None:
    bare = child_env()
    for args, env, expected in (
        (("--user", "alice"), bare, "set TRULOOP_JWT_SECRET"),
        (("--user", "alice", "--port", "0"), {**bare, "TRULOOP_JWT_SECRET": SECRET}, "pass --url"),
        (("--user", "alice", "--ttl", "forever"), {**bare, "TRULOOP_JWT_SECRET": SECRET}, "--ttl 'forever'"),
    ):
        done = mint(*args, env=env)
        assert done.returncode == 2 and done.stdout == "", done
        assert expected in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    with_audience = {**bare, "TRULOOP_JWT_SECRET": SECRET, "TRULOOP_JWT_AUDIENCE": "a,b"}
    done = mint("--user", "bob", "--role", "guest", "--groups", "ops, dev", "--port", "0", env=with_audience)
    claims = jwt.decode(done.stdout.strip(), SECRET, algorithms=["HS256"], audience="a")
    assert claims["aud"] == "a" and claims["role"] == "guest" and claims["groups"] == ["ops", "dev"]


@pytest.mark.anyio
async def test_a_numeric_string_exp_is_read_as_a_number_and_never_cached_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    verifier = JwtVerifier(SecretStr(SECRET), audiences=(AUDIENCE,))
    exp = int(time.time()) + 60
    access = await verifier.check(token(exp=str(exp)))
    assert access.expires_at == exp and access.claims is not None and access.claims["exp"] == exp
    assert all(until <= exp for _, until, _ in verifier._verified.values())
    with pytest.raises(RefusedTokenError, match=r"^token expired$"):
        await verifier.check(token(exp=str(int(time.time()) - 120)))


@pytest.mark.anyio
async def test_an_hs256_token_without_exp_is_refused_as_such() -> None:
    verifier = JwtVerifier(SecretStr(SECRET), audiences=(AUDIENCE,))
    with pytest.raises(RefusedTokenError, match=r"^token has no exp claim$"):
        await verifier.check(token(exp=None))
    assert await verifier.verify_token(token(exp=None)) is None
    assert not verifier._verified  # nothing cached
    assert (await verifier.check(token())).expires_at is not None


@pytest.fixture
async def shim(tmp_path: Path) -> AsyncIterator[str]:
    async with serve_in_process(build_http_app(settings(jwt_secret=SECRET, data_dir=tmp_path / "data"))) as base:
        yield base


@pytest.mark.anyio
async def test_a_device_stream_opened_with_a_numeric_string_exp_closes_at_it(shim: str) -> None:
    headers = {"Authorization": f"Bearer {token(exp=str(int(time.time()) + 2))}"}
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(8):
            async with client.stream("GET", f"{shim}/api/v1/agent/rpc-stream", headers=headers) as stream:
                assert stream.status_code == 200
                async for line in stream.aiter_lines():
                    lines.append(line)
    assert 'data: {"reason":"token_expired"}' in lines
