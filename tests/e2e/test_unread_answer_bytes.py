"""Answers a client does not read are bounded in bytes, over a real `truloop-mcp --transport http` (docs/http.md).

A 5 MB document under `--docs` is what any member may read (`truloop://docs/big.md`). A client asks for it again
and again and reads none of the answers:

- streamable HTTP: each `resources/read` POST on a connection that is never read;
- legacy SSE: each `resources/read` POSTed to `/messages/`, its answer due on a `GET /sse` that is never read.

Past the session's byte bound the session is closed (one log line, later requests 503), the server's RSS grows by
less than `GROWTH_MB`, and once the client has gone its RSS is back within `BACK_MARGIN_MB` of the start within
`BACK_WITHIN` seconds.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_unread_backlog import (
    ACCEPT,
    BACK_MARGIN_MB,
    BACK_WITHIN,
    INIT,
    READY,
    back_within,
    open_sse,
    port_of,
    rss_mb,
    unread_socket,
)
from tests.support import http_server_process

pytestmark = pytest.mark.timeout(60)

ANSWERS = 33  # at 5 MB each, several times the 32 MiB a session may leave unread
DOC_BYTES = 5 * 1024 * 1024
GROWTH_MB = 200
READ_BIG = {"jsonrpc": "2.0", "method": "resources/read", "params": {"uri": "truloop://docs/big.md"}}
CLOSED = "unread"  # what the session's closing says, in the log line and in the 503


@pytest.fixture
def docs_server(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    docs = tmp_path / "docs"
    docs.mkdir()
    line = "All work and no play makes a large document. " * 20 + "\n"
    (docs / "big.md").write_text("# Big\n\n" + line * (DOC_BYTES // len(line)))
    with http_server_process("--docs", str(docs)) as (base, proc, log):
        yield base, proc.pid, log


def post_unread(port: int, headers: dict[str, str], message: dict[str, object]) -> socket.socket:
    """POST `message` to /mcp on a connection that is never read."""
    body = json.dumps(message).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock = unread_socket(port)
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def test_streamable_http_answers_left_unread_close_the_session(docs_server: tuple[str, int, Path]) -> None:
    base, pid, log = docs_server
    port = port_of(base)
    sockets: list[socket.socket] = []
    with httpx.Client(timeout=10, headers={"accept": ACCEPT}) as http:
        opened = http.post(f"{base}/mcp", json=INIT)
        session = opened.headers["mcp-session-id"]
        on = {"accept": ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        assert http.post(f"{base}/mcp", json=READY, headers=on).status_code == 202
        start = peak = rss_mb(pid)
        try:
            for i in range(1, ANSWERS + 1):
                sockets.append(post_unread(port, on, {**READ_BIG, "id": i}))
                time.sleep(0.15)
                peak = max(peak, rss_mb(pid))
            time.sleep(2.0)
            peak = max(peak, rss_mb(pid))
            later = http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "ping"}, headers=on)
        finally:
            for sock in sockets:
                sock.close()
    back = back_within(pid, start)
    print(f"streamable HTTP: RSS start {start} MB, peak {peak} MB, {BACK_WITHIN:.0f} s after the client left {back} MB")
    assert later.status_code == 503 and CLOSED in later.text, later.text[:300]
    assert "bytes of answers unread" in log.read_text()
    assert peak - start < GROWTH_MB, (start, peak)
    assert back <= start + BACK_MARGIN_MB, (start, back)


def test_legacy_sse_answers_left_unread_close_the_session(docs_server: tuple[str, int, Path]) -> None:
    base, pid, log = docs_server
    sock, session = open_sse(port_of(base))
    url = f"{base}/messages/?session_id={session}"
    codes: dict[int, int] = {}
    with httpx.Client(timeout=10) as http:
        assert http.post(url, json=INIT).status_code == 202
        assert http.post(url, json=READY).status_code == 202
        start = peak = rss_mb(pid)
        try:
            for i in range(1, 2 * ANSWERS + 1):
                status = http.post(url, json={**READ_BIG, "id": i}).status_code
                codes[status] = codes.get(status, 0) + 1
                time.sleep(0.15)
                peak = max(peak, rss_mb(pid))
                if status == 503:
                    break
            time.sleep(1.0)
            peak = max(peak, rss_mb(pid))
        finally:
            sock.close()
    back = back_within(pid, start)
    print(f"legacy SSE: RSS start {start} MB, peak {peak} MB, {BACK_WITHIN:.0f} s after the client left {back} MB")
    assert codes.get(503) == 1, codes
    assert "bytes of answers unread" in log.read_text()
    assert peak - start < GROWTH_MB, (start, peak)
    assert back <= start + BACK_MARGIN_MB, (start, back)
