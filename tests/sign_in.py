"""Test doubles for sign-in: an OAuth authorization server on 127.0.0.1 (metadata and a JWKS, keys made with
`cryptography`, RS256 and ES256 tokens) and a reverse proxy that puts a server behind a public URL."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

# the first request a test's client sends over streamable HTTP, and the headers it sends with it
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

REALM_PATH = "/realms/truloop"  # a Keycloak-style issuer: its OpenID configuration under its own path


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` on a loopback port of the kernel's choosing, in a thread; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class AuthorizationServer:
    """An issuer whose published key set can be changed while it runs (a rotation). `style` is where its
    metadata is: `oidc` at `<issuer>/.well-known/openid-configuration` (Keycloak), `rfc8414` at
    `/.well-known/oauth-authorization-server<issuer path>`."""

    def __init__(self, style: str = "oidc") -> None:
        self.style = style
        self.base = ""
        self.private: dict[str, Any] = {}  # kid -> private key
        self.published: list[str] = []
        self.jwks_requests = 0

    @property
    def issuer(self) -> str:
        return f"{self.base}{REALM_PATH}"

    def new_key(self, kind: str = "RSA") -> str:
        kid = f"{kind.lower()}-{uuid.uuid4().hex[:8]}"
        if kind == "RSA":
            self.private[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.private[kid] = ec.generate_private_key(ec.SECP256R1())
        return kid

    def publish(self, *kids: str) -> None:
        self.published = list(kids)

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            key = self.private[kid]
            if isinstance(key, rsa.RSAPrivateKey):
                jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
            else:
                jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": keys}

    def metadata(self) -> dict[str, Any]:
        issuer = self.issuer
        return {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/protocol/openid-connect/auth",
            "token_endpoint": f"{issuer}/protocol/openid-connect/token",
            "jwks_uri": f"{issuer}/protocol/openid-connect/certs",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        }

    def mint(self, kid: str, *, signed_by: str | None = None, **claims: Any) -> str:
        """A token with header `kid`, signed by `signed_by`'s key (default: the kid's own); claims default to a
        member of this issuer with a 5-minute lifetime (`aud` must be given); a claim given as None is left out."""
        now = int(time.time())
        payload = {"iss": self.issuer, "sub": "alice", "iat": now, "exp": now + 300, **claims}
        payload = {name: value for name, value in payload.items() if value is not None}
        key = self.private[signed_by or kid]
        algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": kid})

    @contextlib.contextmanager
    def running(self) -> Iterator[AuthorizationServer]:
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if issuer.style == "oidc":
                    metadata_path = f"{REALM_PATH}/.well-known/openid-configuration"
                else:
                    metadata_path = f"/.well-known/oauth-authorization-server{REALM_PATH}"
                if path == metadata_path:
                    self._json(issuer.metadata())
                elif path == f"{REALM_PATH}/protocol/openid-connect/certs":
                    issuer.jwks_requests += 1
                    self._json(issuer.jwks())
                else:
                    self.send_error(404)

            def _json(self, document: dict[str, Any]) -> None:
                body = json.dumps(document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        with serving(Handler) as base:
            self.base = base
            yield self


class PrefixProxy:
    """A reverse proxy at `http://127.0.0.1:PORT<prefix>` in front of `upstream` (set once the server runs): paths under
    `prefix` reach the server without it, and the RFC 9728 well-known paths unchanged, as a proxy that serves
    the app under a path prefix is configured to. Whole bodies, no streaming: enough for sign-in."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix.rstrip("/")
        self.upstream = ""
        self.public = ""

    @contextlib.contextmanager
    def running(self) -> Iterator[PrefixProxy]:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                path = self.path
                if path.startswith(f"{proxy.prefix}/"):
                    path = path[len(proxy.prefix) :]
                elif not path.startswith("/.well-known/"):
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                skip = {"host", "connection", "content-length", "transfer-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                answer = httpx.request(self.command, proxy.upstream + path, headers=headers, content=body, timeout=15)
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in skip | {"content-encoding"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def do_DELETE(self) -> None:
                self._forward()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        with serving(Handler) as base:
            self.public = base + self.prefix
            yield self
