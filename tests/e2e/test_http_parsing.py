"""HTTP/1.1 as RFC 9112 reads it, a header timeout and a connection cap, over real HTTP on 127.0.0.1 with raw sockets,
on every HTTP stack the server runs: httptools with the speed paths (`fast`), httptools without them (`plain`) and
h11 (`h11`: the speed paths off and httptools hidden from the server, as on an install without the `fast` extra).

A request two parsers could read differently (a proxy in front and this server) is answered 400 and its connection
closed; a client that sends its request head too slowly, or nothing at all, is disconnected after `--header-timeout`
while others are served; past `--max-connections` a new connection is refused until others close.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from server.http.connection_guard import BadRequestError, ConnectionLimits, default_max_connections
from server.http.request_framing import RequestFraming
from tests.support import http_server_process, paths_env

HTTPTOOLS = importlib.util.find_spec("httptools") is not None
STACKS = ["fast", "plain", "h11"]


@pytest.fixture(scope="module")
def hidden_httptools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that, first on the server's PYTHONPATH, makes `import httptools` fail."""
    folder = tmp_path_factory.mktemp("no-httptools")
    (folder / "httptools").mkdir()
    (folder / "httptools" / "__init__.py").write_text('raise ImportError("hidden by the test")\n')
    return folder


@contextlib.contextmanager
def serving(stack: str, hidden: Path, *args: str) -> Iterator[int]:
    """`truloop-mcp --transport http --port 0` on `stack`; yields its port once it serves (its log names the parser)."""
    env = paths_env(stack == "fast", **({"PYTHONPATH": str(hidden)} if stack == "h11" else {}))
    with http_server_process("--log-level", "INFO", *args, env=env) as (base, _, log):
        parser = "httptools" if stack != "h11" and HTTPTOOLS else "h11"
        assert f"with the {parser} parser" in log.read_text()
        yield int(base.rsplit(":", 1)[1])


@pytest.fixture(scope="module", params=STACKS)
def server(request: pytest.FixtureRequest, hidden_httptools: Path) -> Iterator[int]:
    with serving(request.param, hidden_httptools) as port:
        yield port


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def read_response(sock: socket.socket, stream: BinaryIO | None = None) -> tuple[bytes, bytes]:
    """(status line, body) of the next response on `sock`: as long as its Content-Length says, else up to the close.
    Pass the same `stream` (`sock.makefile("rb")`) to read pipelined responses one after the other."""
    stream = stream or sock.makefile("rb")
    status = stream.readline().rstrip(b"\r\n")
    assert status, "closed before a response"
    length = None
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return status, stream.read(length) if length is not None else stream.read()


def closed_by_server(sock: socket.socket, within: float = 5.0) -> bool:
    """Whether the server closes `sock` within `within` s (what it still sends is read and dropped)."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def host(port: int) -> bytes:
    return f"127.0.0.1:{port}".encode()


MALFORMED = {
    "duplicate Host": b"GET /healthz HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\n\r\n",
    "no Host on HTTP/1.1": b"GET /healthz HTTP/1.1\r\n\r\n",
    "absolute-form to another host": (
        b"POST http://evil.example/mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"
    ),
    "absolute-form GET to another host": b"GET http://evil.example/healthz HTTP/1.1\r\nHost: {host}\r\n\r\n",
    # refused whatever its authority (documented in docs/http.md): this server is no proxy
    "absolute-form to this host": b"GET http://{host}/healthz HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "Content-Length and Transfer-Encoding": (
        b"POST /healthz HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    "two Content-Lengths": b"POST /healthz HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
    "Transfer-Encoding on HTTP/1.0": (
        b"POST /healthz HTTP/1.0\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    "a transfer coding other than chunked": (
        b"POST /healthz HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
    ),
    "obs-fold": b"GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Folded: a\r\n b\r\n\r\n",
    "bare LF line ends": b"GET /healthz HTTP/1.1\nHost: {host}\n\n",
    "one bare LF": b"GET /healthz HTTP/1.1\r\nHost: {host}\nX-A: b\r\n\r\n",
    "a control character in a value": b"GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-A: a\x01b\r\n\r\n",
    "chunk-size overflow": (
        b"POST /healthz HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"ffffffffffffffffffff\r\nx\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_request_parsers_could_read_differently_gets_400_and_a_closed_connection(server: int, case: str) -> None:
    with connect(server) as sock:
        sock.sendall(MALFORMED[case].replace(b"{host}", host(server)))
        status, body = read_response(sock)
        assert (status, body) == (b"HTTP/1.1 400 Bad Request", b"Invalid HTTP request received."), case  # not the app's

        assert closed_by_server(sock), case


def test_well_formed_requests_are_served_on_one_connection(server: int) -> None:
    """Pipelined requests, a chunked body with an extension and a trailer, and the connection stays open."""
    with connect(server) as sock:
        get = b"GET /healthz HTTP/1.1\r\nHost: " + host(server) + b"\r\n\r\n"
        sock.sendall(get + get)
        stream = sock.makefile("rb")
        assert read_response(sock, stream)[0] == b"HTTP/1.1 200 OK"
        assert read_response(sock, stream)[0] == b"HTTP/1.1 200 OK"
        chunked = b"POST /healthz HTTP/1.1\r\nHost: " + host(server) + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
        sock.sendall(chunked + b"3;name=value\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n")
        assert read_response(sock, stream)[0] == b"HTTP/1.1 405 Method Not Allowed"  # read whole, routed to the app
        for byte in get:  # a head in single bytes is still one request
            sock.send(bytes([byte]))
        assert read_response(sock, stream)[0] == b"HTTP/1.1 200 OK"
        assert not closed_by_server(sock, within=0.3)


def test_whitespace_around_a_header_value_is_not_part_of_it(server: int) -> None:
    """RFC 9110 §5.5: `Mcp-Name:  get_day_of_week  ` names the tool, on either parser (llhttp keeps what trails)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: " + host(server) + b"\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        b"Mcp-Method: tools/call\r\nMcp-Name:  get_day_of_week \t\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
    )
    with connect(server) as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
    assert status == b"HTTP/1.1 200 OK", answer
    assert b"Tuesday" in answer


@pytest.mark.parametrize("stack", STACKS)
def test_a_slowloris_client_is_disconnected_after_the_header_timeout(stack: str, hidden_httptools: Path) -> None:
    """20 connections trickling a header byte every 0.5 s, and 2 sending nothing, are closed after the header
    timeout (1.5 s here), while a normal client is served; the trickle stops after 8 s whatever happens."""
    timeout = 1.5
    with serving(stack, hidden_httptools, "--header-timeout", str(timeout)) as port:
        slow = [connect(port) for _ in range(20)]
        silent = [connect(port) for _ in range(2)]
        started = time.monotonic()
        trickle = b"GET /healthz HTTP/1.1\r\nHost: " + host(port) + b"\r\n" + b"X-Slow: " + b"a" * 100
        closed_at: dict[socket.socket, float] = {}
        served = False
        with selectors.DefaultSelector() as watch:
            for sock in slow + silent:
                sock.setblocking(False)
                watch.register(sock, selectors.EVENT_READ)
            sent = 0
            while len(closed_at) < len(slow) + len(silent) and time.monotonic() - started < 8:
                for sock in slow:
                    if sock not in closed_at:
                        with contextlib.suppress(OSError):  # a reset shows on the read below
                            sock.send(trickle[sent : sent + 1])
                sent += 1
                if not served and time.monotonic() - started > timeout / 2:  # while the slow ones are still open
                    with connect(port) as normal:
                        normal.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + host(port) + b"\r\n\r\n")
                        served = read_response(normal)[0] == b"HTTP/1.1 200 OK"
                    assert len(closed_at) == 0, "closed before the header timeout"
                for key, _ in watch.select(timeout=0.5):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        gone = sock.recv(65536) == b""
                    except ConnectionResetError:
                        gone = True
                    if gone:
                        closed_at[sock] = time.monotonic() - started
                        watch.unregister(sock)
        for sock in slow + silent:
            sock.close()
    assert served, "a normal client was not served during the trickle"
    assert len(closed_at) == len(slow) + len(silent), f"{len(slow) + len(silent) - len(closed_at)} still open after 8 s"
    assert all(timeout - 0.2 <= at <= timeout + 3 for at in closed_at.values()), sorted(closed_at.values())


@pytest.mark.parametrize("stack", STACKS)
def test_past_max_connections_new_ones_are_refused_until_others_close(stack: str, hidden_httptools: Path) -> None:
    with serving(stack, hidden_httptools, "--max-connections", "4", "--header-timeout", "30") as port:
        request = b"GET /healthz HTTP/1.1\r\nHost: " + host(port) + b"\r\n\r\n"
        held = []
        for _ in range(4):  # each served once (so surely accepted), then held open by a request begun
            sock = connect(port)
            sock.sendall(request)
            assert read_response(sock)[0] == b"HTTP/1.1 200 OK"
            sock.sendall(request[:20])
            held.append(sock)
        with connect(port) as extra:
            with contextlib.suppress(OSError):  # the server may close before reading it
                extra.sendall(request)
            try:
                answer = extra.recv(65536)
            except ConnectionResetError:
                answer = b""
            assert answer == b"" or answer.startswith(b"HTTP/1.1 503 "), answer
            assert closed_by_server(extra)
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 5  # the server hears of the closes asynchronously
        while True:
            with connect(port) as again, contextlib.suppress(OSError):
                again.sendall(request)
                if again.recv(65536).startswith(b"HTTP/1.1 200 "):
                    break
            assert time.monotonic() < deadline, "not served again after the held connections closed"
            time.sleep(0.1)


# -- the h11 stack's framing, on its own ----------------------------------------------------------------------


def framing() -> tuple[RequestFraming, list[str]]:
    events: list[str] = []
    return RequestFraming(lambda: events.append("start"), lambda: events.append("end")), events


VALID = (
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
    b"POST /y HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"
    b'2;a=1;b="q"\r\nhi\r\n00A\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n'
    b"GET /z HTTP/1.0\r\n\r\n"
)


@pytest.mark.parametrize("size", [1, 2, 7, len(VALID)])
def test_framing_follows_valid_requests_however_they_are_split(size: int) -> None:
    reader, events = framing()
    for at in range(0, len(VALID), size):
        reader.feed(VALID[at : at + size])
    assert events == ["start", "end"] * 4


def test_framing_refuses_each_malformed_request() -> None:
    for case, data in MALFORMED.items():
        reader, _ = framing()
        with pytest.raises(BadRequestError):
            reader.feed(data.replace(b"{host}", b"a"))
            pytest.fail(f"{case} was accepted")


def test_framing_refuses_what_follows_a_chunk_without_its_crlf_and_overlong_heads() -> None:
    reader, _ = framing()
    with pytest.raises(BadRequestError, match="CRLF"):
        reader.feed(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiXY\r\n0\r\n\r\n")
    reader, _ = framing()
    with pytest.raises(BadRequestError, match="64 KiB"):
        reader.feed(b"GET / HTTP/1.1\r\nHost: a\r\n" + b"X-A: " + b"a" * 70_000)


def test_the_default_connection_cap_follows_the_open_file_limit() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    derived = default_max_connections()
    assert 16 <= derived <= 4096 and (soft == resource.RLIM_INFINITY or derived <= max(16, soft // 2))
    assert ConnectionLimits.of(10.0, 0).max_connections == derived
    assert ConnectionLimits.of(2.5, 7) == ConnectionLimits(2.5, 7)
