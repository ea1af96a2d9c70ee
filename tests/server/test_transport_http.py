"""HTTP fast paths: verified JWTs cached by token hash until `exp` (and never past a rotation of the secret),
and `--transport http` on uvloop + httptools when the `fast` extra is installed (with the speed paths on; off,
on asyncio's loop with uvicorn's own choice of parser)."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from pydantic import SecretStr

from server.auth.identity import JwtVerifier
from tests.support import AUDIENCE, FAST_AND_PLAIN, SECRET, http_server_process, paths_env, token

OTHER_SECRET = "rotated-secret-" + "y" * 32


class Counting(JwtVerifier):
    def __init__(self, secret: str) -> None:
        super().__init__(SecretStr(secret), audiences=(AUDIENCE,))
        self.decoded = 0

    def decode(self, raw: str, *args: Any) -> dict[str, Any]:
        self.decoded += 1
        return super().decode(raw, *args)


@pytest.mark.anyio
async def test_a_verified_token_is_decoded_once_and_served_from_the_cache() -> None:
    verifier = Counting(SECRET)
    bearer = token(sub="alice")
    first = await verifier.verify_token(bearer)
    second = await verifier.verify_token(bearer)
    assert first is not None and second is not None and second.subject == "alice"
    assert verifier.decoded == 1
    assert (await verifier.verify_token(token(sub="bob"))).subject == "bob"  # type: ignore[union-attr]
    assert verifier.decoded == 2


@pytest.mark.anyio
async def test_a_cached_token_still_expires_at_its_exp(monkeypatch: pytest.MonkeyPatch) -> None:
    verifier = Counting(SECRET)
    bearer = token(sub="alice", exp=int(time.time()) + 60)
    assert await verifier.verify_token(bearer) is not None
    assert await verifier.verify_token(bearer) is not None and verifier.decoded == 1
    later = time.time() + 60 + 31  # past exp and the 30 s leeway jwt.decode allows
    monkeypatch.setattr(time, "time", lambda: later)
    await verifier.verify_token(bearer)  # (PyJWT reads its own clock, so only the cache's clock moved here)
    assert verifier.decoded == 2, "the cache served a token past its exp instead of checking it again"
    assert all(len(key) == 32 for key in verifier._verified)  # keyed by SHA-256, not by the token


@pytest.mark.anyio
async def test_a_token_not_yet_valid_is_refused_and_not_cached() -> None:
    verifier = Counting(SECRET)
    early = token(sub="alice", nbf=int(time.time()) + 600)
    assert await verifier.verify_token(early) is None
    assert await verifier.verify_token(early) is None
    assert verifier.decoded == 2  # refusals are never cached: each one is checked again


@pytest.mark.anyio
async def test_rotating_the_secret_refuses_tokens_the_old_one_signed() -> None:
    old_token = token(sub="alice")
    assert await Counting(SECRET).verify_token(old_token) is not None
    rotated = Counting(OTHER_SECRET)
    assert await rotated.verify_token(old_token) is None
    assert await rotated.verify_token(token(sub="alice", secret=OTHER_SECRET)) is not None


@pytest.mark.anyio
async def test_the_cache_is_bounded() -> None:
    verifier = Counting(SECRET)
    verifier.CACHE_SIZE = 8
    tokens = [token(sub=f"user{n}") for n in range(20)]
    for bearer in tokens:
        await verifier.verify_token(bearer)
    assert len(verifier._verified) == 8
    await verifier.verify_token(tokens[0])  # evicted: decoded again
    assert verifier.decoded == 21


@FAST_AND_PLAIN
def test_http_runs_on_uvloop_and_httptools_when_installed(tmp_path: Path, fast_paths: bool) -> None:
    httptools = importlib.util.find_spec("httptools") is not None
    fast = importlib.util.find_spec("uvloop") is not None and httptools
    env = paths_env(fast_paths, TRULOOP_JWT_SECRET=SECRET)
    with http_server_process("--log-level", "INFO", env=env) as (base, _, log):
        bearer = token(sub="alice")
        response = httpx.get(f"{base}/healthz", timeout=10)
        refused = httpx.post(f"{base}/mcp", json={}, timeout=10)
        allowed_body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"}
        for _ in range(2):  # the second request is answered from the token cache
            answered = httpx.post(f"{base}/mcp", json=allowed_body, headers=headers, timeout=10)
            assert answered.status_code != 401, answered.text
        text = log.read_text()
    assert response.status_code == 200 and refused.status_code == 401
    expected = "HTTP on the uvloop event loop with the httptools parser" if fast else "HTTP on the asyncio event loop"
    if not fast_paths:
        expected = f"HTTP on the asyncio event loop with the {'httptools' if httptools else 'h11'} parser"
    assert expected in text, text
    assert jwt.decode(bearer, SECRET, algorithms=["HS256"], audience=AUDIENCE)["sub"] == "alice"
