"""Sign-in with an `--oauth-issuer` is bounded, in-process against a fake issuer on 127.0.0.1 (a raw asyncio TCP
server, so it can misbehave as no HTTP framework would let it):

- a JWKS trickled 1 byte every 2 s: every sign-in waiting for it is refused (401, `WWW-Authenticate`) within
  6 s, and concurrent sign-ins share one fetch;
- a 300 MB key set (streamed lazily, with or without a Content-Length): refused within 6 s, the process's
  RSS grows by under 50 MB;
- an issuer that turns slow, then goes down, after a first good fetch: tokens whose key is held keep
  verifying at once, with no wait for the refresh; a token whose key cannot be fetched is refused within 6 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from server.auth.issuer_keys import IssuerKeys
from server.http.asgi_app import build_http_app
from tests.sign_in import ACCEPT, INIT, REALM_PATH, AuthorizationServer
from tests.support import AUDIENCE, serve_in_process, settings

HUGE = 300 * 1024 * 1024
CHUNK = b" " * 65536
ANSWERED_WITHIN = 6.0


class FakeIssuer:
    """`signer`'s metadata and JWKS over HTTP/1.1; `mode` decides how the JWKS is sent: `good`, `trickle`
    (1 byte every 2 s), `huge` (300 MB, no Content-Length, until the client hangs up) or `huge-declared`
    (the same with `Content-Length: 314572800`)."""

    def __init__(self, signer: AuthorizationServer) -> None:
        self.signer = signer
        self.mode = "good"
        self.jwks_requests = 0
        self.sent = 0  # bytes of JWKS body written
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[FakeIssuer]:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.signer.base = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        try:
            yield self
        finally:
            self.down()

    def down(self) -> None:
        """Stop listening (connections are refused) and drop every open connection."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode().split("?", 1)[0]
            if path == f"{REALM_PATH}/.well-known/openid-configuration":
                await self._send(writer, json.dumps(self.signer.metadata()).encode())
            elif path == f"{REALM_PATH}/protocol/openid-connect/certs":
                self.jwks_requests += 1
                await self._jwks(writer)
            else:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    async def _send(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n")
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()

    async def _jwks(self, writer: asyncio.StreamWriter) -> None:
        body = json.dumps(self.signer.jwks()).encode()
        if self.mode == "good":
            await self._send(writer, body)
            return
        length = b"Content-Length: %d\r\n" % (len(body) if self.mode == "trickle" else HUGE)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n")
        writer.write((b"" if self.mode == "huge" else length) + b"\r\n")
        if self.mode == "trickle":
            for byte in body:
                writer.write(bytes([byte]))
                await writer.drain()
                self.sent += 1
                await asyncio.sleep(2)
            return
        writer.write(b'{"keys": [')
        while self.sent < HUGE:  # made as it is sent: the test never holds more than one chunk
            writer.write(CHUNK)
            await writer.drain()
            self.sent += len(CHUNK)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.fixture
async def issuer() -> AsyncIterator[FakeIssuer]:
    async with FakeIssuer(AuthorizationServer()).running() as fake:
        yield fake


@contextlib.asynccontextmanager
async def product(issuer: FakeIssuer, tmp_path: Path) -> AsyncIterator[str]:
    """The HTTP app with `--oauth-issuer` at the fake issuer, in this event loop; yields its /mcp URL."""
    configured = settings(oauth_issuer=issuer.signer.issuer, jwt_audience=(AUDIENCE,), data_dir=tmp_path / "data")
    async with serve_in_process(build_http_app(configured)) as base:
        yield f"{base}/mcp"


async def sign_in(url: str, bearer: str) -> tuple[httpx.Response, float]:
    """An initialize with `bearer`, and how long it took to be answered."""
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {bearer}"})
    return response, time.monotonic() - started


def assert_refused(response: httpx.Response, took: float) -> None:
    assert response.status_code == 401, (response.status_code, response.text)
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge and "signing keys are unavailable" in challenge, challenge
    assert took < ANSWERED_WITHIN, f"sign-in answered after {took:.1f} s"


@pytest.mark.anyio
async def test_a_trickled_key_set_is_given_up_and_every_sign_in_waiting_for_it_is_refused_promptly(
    issuer: FakeIssuer, tmp_path: Path
) -> None:
    key = issuer.signer.new_key("RSA")
    issuer.signer.publish(key)
    issuer.mode = "trickle"
    async with product(issuer, tmp_path) as url:
        answers: list[tuple[httpx.Response, float]] = []

        async def one(n: int) -> None:
            answers.append(await sign_in(url, issuer.signer.mint(key, aud=AUDIENCE, jti=str(n))))

        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(one, n)
        for response, took in answers:
            assert_refused(response, took)
        assert issuer.jwks_requests == 1, "concurrent sign-ins each started their own fetch"
        assert issuer.sent <= 3, f"{issuer.sent} bytes trickled: the deadline is not overall"
        print(f"trickle: refused after {max(took for _, took in answers):.2f} s")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["huge", "huge-declared"])
async def test_a_300_mb_key_set_is_refused_promptly_without_growing_memory(
    issuer: FakeIssuer, tmp_path: Path, mode: str
) -> None:
    key = issuer.signer.new_key("EC")
    issuer.signer.publish(key)
    issuer.mode = mode
    async with product(issuer, tmp_path) as url:
        before = rss_kib()
        with anyio.fail_after(15):
            response, took = await sign_in(url, issuer.signer.mint(key, aud=AUDIENCE))
        grown = rss_kib() - before
        assert_refused(response, took)
        assert grown < 50 * 1024, f"RSS grew by {grown} KiB"
        assert issuer.jwks_requests == 1
        if mode == "huge-declared":
            assert took < 2.0, f"a Content-Length over the cap was read for {took:.1f} s"
        print(f"{mode}: refused after {took:.2f} s, RSS +{grown} KiB, {issuer.sent} bytes sent")


@pytest.mark.anyio
async def test_held_keys_keep_verifying_while_the_issuer_is_slow_or_down(
    issuer: FakeIssuer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signer = issuer.signer
    key = signer.new_key("RSA")
    signer.publish(key)
    async with product(issuer, tmp_path) as url:
        with anyio.fail_after(10):
            response, _ = await sign_in(url, signer.mint(key, aud=AUDIENCE))
        assert response.status_code == 200, response.text
        assert issuer.jwks_requests == 1

        monkeypatch.setattr(IssuerKeys, "MAX_AGE", 0.0)  # from now on every token finds the key set stale
        issuer.mode = "trickle"
        for n in range(3):  # a fresh token each time: a verified one is cached by the verifier
            with anyio.fail_after(10):
                response, took = await sign_in(url, signer.mint(key, aud=AUDIENCE, jti=f"slow-{n}"))
            assert response.status_code == 200, response.text
            assert took < 1.0, f"a held key waited {took:.1f} s for the slow issuer"
        assert issuer.jwks_requests == 2, "the refreshes did not share one fetch"

        issuer.down()
        for n in range(3):
            with anyio.fail_after(10):
                response, took = await sign_in(url, signer.mint(key, aud=AUDIENCE, jti=f"down-{n}"))
            assert response.status_code == 200, response.text
            assert took < 1.0, f"a held key waited {took:.1f} s for the issuer that is down"

        unknown = signer.new_key("RSA")  # a key the server could only learn from the issuer
        with anyio.fail_after(10):
            response, took = await sign_in(url, signer.mint(unknown, aud=AUDIENCE))
        assert response.status_code == 401 and "www-authenticate" in response.headers, response.text
        assert took < ANSWERED_WITHIN, f"refused after {took:.1f} s"
