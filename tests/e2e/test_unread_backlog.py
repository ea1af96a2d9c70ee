"""A client that stops reading cannot grow the server's memory, over a real `truloop-mcp --transport http`.

- legacy SSE: a `GET /sse` that is never read after its endpoint event, then POSTs of requests whose answers are
  large (`tools/list`): past 64 unread answers the session is closed (one log line), later POSTs are answered 503
  at once, and the server's RSS stays under +200 MB and is back within 30 s of the client leaving;
- the same stream flooded by a guest with 0.9 MB unknown method names (which the error used to echo);
- streamable HTTP: 4 users x 50 sessions, each sending one 4 MB request whose response is never read: RSS under
  +200 MB while the sockets are open, and back within 30 s of their closing.

Each load is bounded in count and time and stops by itself.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import SECRET, child_env, http_server_process, token

pytestmark = pytest.mark.slow

GROWTH_MB = 200
BACK_WITHIN = 30.0
BACK_MARGIN_MB = 50
ACCEPT = "application/json, text/event-stream"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "slow", "version": "1"}},
}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1].split("/")[0])


def back_within(pid: int, start: int) -> int:
    """The RSS once it is back within BACK_MARGIN_MB of `start` (fails after BACK_WITHIN seconds)."""
    deadline = time.monotonic() + BACK_WITHIN
    while True:
        now = rss_mb(pid)
        if now <= start + BACK_MARGIN_MB or time.monotonic() > deadline:
            return now
        time.sleep(0.5)


def unread_socket(port: int) -> socket.socket:
    """A connection that takes almost nothing: a small receive buffer, never read after the first bytes."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    return sock


def open_sse(port: int, bearer: str | None = None) -> tuple[socket.socket, str]:
    """A `GET /sse` read only up to its endpoint event; the session id."""
    sock = unread_socket(port)
    auth = f"Authorization: Bearer {bearer}\r\n" if bearer else ""
    sock.sendall(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n{auth}\r\n".encode())
    seen = b""
    sock.settimeout(10)
    while (found := re.search(rb"session_id=([0-9a-f]{32})", seen)) is None:
        seen += sock.recv(4096)
    return sock, found.group(1).decode()


@pytest.fixture
def plain_server() -> Iterator[tuple[str, int, Path]]:
    with http_server_process() as (base, proc, log):
        yield base, proc.pid, log


def test_a_legacy_sse_reader_that_stops_reading_has_its_session_closed(plain_server: tuple[str, int, Path]) -> None:
    base, pid, log = plain_server
    start = rss_mb(pid)
    sock, session = open_sse(port_of(base))
    url = f"{base}/messages/?session_id={session}"
    peak, codes, refused_in = start, {}, None
    with httpx.Client(timeout=10) as http:
        assert http.post(url, json=INIT).status_code == 202
        assert http.post(url, json=READY).status_code == 202
        began = time.monotonic()
        for i in range(1, 2001):
            sent = time.monotonic()
            status = http.post(url, json={"jsonrpc": "2.0", "id": i, "method": "tools/list"}).status_code
            codes[status] = codes.get(status, 0) + 1
            if i % 20 == 0:
                peak = max(peak, rss_mb(pid))
            if status == 503:
                refused_in = time.monotonic() - sent
                break
            assert time.monotonic() - began < 60, codes
        assert refused_in is not None, f"never closed: {codes}"
        assert refused_in < 2.0
        again = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
        assert again.status_code == 503 and again.json()["error"]["code"] == -32000
    assert codes[202] >= 64  # the bound is on unread answers, not on answers the kernel took
    assert peak - start < GROWTH_MB, (start, peak)
    assert "client left the answers to 64 requests unread" in log.read_text()
    sock.close()
    assert back_within(pid, start) <= start + BACK_MARGIN_MB


def test_a_guest_flooding_a_stalled_sse_stream_with_long_method_names() -> None:
    with http_server_process(env=child_env(TRULOOP_JWT_SECRET=SECRET)) as (base, proc, _):
        start = rss_mb(proc.pid)
        bearer = token("guest-1", role="guest")
        sock, session = open_sse(port_of(base), bearer)
        url = f"{base}/messages/?session_id={session}"
        headers = {"authorization": f"Bearer {bearer}", "content-type": "application/json"}
        peak = start
        with httpx.Client(timeout=10, headers=headers) as http:
            assert http.post(url, json=INIT).status_code == 202
            assert http.post(url, json=READY).status_code == 202
            began = time.monotonic()
            for i in range(1, 301):
                body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "x" * 900_000})
                assert http.post(url, content=body).status_code in (202, 503)
                if i % 25 == 0:
                    peak = max(peak, rss_mb(proc.pid))
                if time.monotonic() - began > 40:
                    break
        peak = max(peak, rss_mb(proc.pid))
        sock.close()
        assert peak - start < GROWTH_MB, (start, peak)
        assert back_within(proc.pid, start) <= start + BACK_MARGIN_MB


def test_streamable_http_posts_whose_responses_are_never_read() -> None:
    """4 users x 50 sessions, one 4 MB request each (the transport's largest), its response never read."""
    with http_server_process(env=child_env(TRULOOP_JWT_SECRET=SECRET)) as (base, proc, _):
        port = port_of(base)
        start = rss_mb(proc.pid)
        sockets: list[socket.socket] = []
        peak = start
        began = time.monotonic()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * (4 * 1024 * 1024 - 100)}).encode()
        try:
            with httpx.Client(timeout=20) as http:
                for user in range(4):
                    bearer = token(f"reader-{user}")
                    headers = {"authorization": f"Bearer {bearer}", "accept": ACCEPT}
                    for _ in range(50):
                        opened = http.post(f"{base}/mcp", json=INIT, headers=headers)
                        session = opened.headers["mcp-session-id"]
                        on = {**headers, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
                        assert http.post(f"{base}/mcp", json=READY, headers=on).status_code == 202
                        sock = unread_socket(port)
                        head = "".join(f"{k}: {v}\r\n" for k, v in on.items())
                        sock.sendall(
                            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}content-type: application/json\r\n"
                            f"content-length: {len(body)}\r\n\r\n".encode()
                            + body
                        )
                        sockets.append(sock)
                        assert time.monotonic() - began < 90
                    peak = max(peak, rss_mb(proc.pid))
            time.sleep(1.0)
            peak = max(peak, rss_mb(proc.pid))
            assert peak - start < GROWTH_MB, (start, peak)
        finally:
            for sock in sockets:
                sock.close()
        assert back_within(proc.pid, start) <= start + BACK_MARGIN_MB
