"""Where each request on an HTTP/1.1 connection begins and ends, followed byte by byte under RFC 9112's strict
rules, for the h11 stack.

h11 is lenient where httptools (llhttp) is strict: it reads a head whose lines end in a bare LF, joins obs-folded
header lines, takes a body framed by both `Content-Length` and `Transfer-Encoding`, and waits for the body of a
chunk whose size no 64-bit parser can hold. A proxy in front may read any of these differently and see another
request where h11 sees a body. `RequestFraming` reads the same bytes before h11 does and raises `BadRequestError` on
the first of them (the connection is then answered 400 and closed); what it lets through, h11 and llhttp read
alike. It also tells when a request head starts and ends (for the header timeout).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from server.http.connection_guard import BadRequestError, check_request_head

MAX_HEAD_BYTES = 64 * 1024  # above h11's own limit (uvicorn's default 16 KiB), which refuses first
MAX_CHUNK_LINE_BYTES = 4096
MAX_CHUNK_SIZE = (1 << 63) - 1  # what a signed 64-bit size holds: no parser in front wraps around

TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
CONTROL_IN_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
CHUNK_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]+)(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?")
VERSIONS = {b"HTTP/1.1": "1.1", b"HTTP/1.0": "1.0"}

# what the next bytes are
HEAD, BODY, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILER = range(6)


class RequestFraming:
    """Feed it every byte a connection receives, in order (`feed`); it raises `BadRequestError` at the first byte that
    is not strict HTTP/1.1 request framing. `on_head_start` runs at the first byte of each request head,
    `on_head_end` once the head is complete and checked."""

    __slots__ = ("_head", "_head_bytes", "_line", "_on_head_end", "_on_head_start", "_remaining", "_state")

    def __init__(self, on_head_start: Callable[[], None], on_head_end: Callable[[], None]) -> None:
        self._on_head_start = on_head_start
        self._on_head_end = on_head_end
        self._state = HEAD
        self._line = bytearray()  # the line read so far (head, chunk-size, chunk end, trailer)
        self._head: list[bytes] = []  # the head's lines so far, without their CRLF
        self._head_bytes = 0
        self._remaining = 0  # bytes left in the body (BODY) or the chunk (CHUNK_DATA)

    def feed(self, data: bytes) -> None:
        pos, end = 0, len(data)
        while pos < end:
            if self._state in (BODY, CHUNK_DATA):
                taken = min(self._remaining, end - pos)
                pos += taken
                self._remaining -= taken
                if not self._remaining:
                    self._state = HEAD if self._state == BODY else CHUNK_END
                continue
            if self._state == HEAD and not self._head and not self._line:
                self._on_head_start()
            newline = data.find(b"\n", pos)
            stop = end if newline < 0 else newline + 1
            self._line += data[pos:stop]
            pos = stop
            self._check_length()
            if newline >= 0:
                line = bytes(self._line)
                self._line.clear()
                self._line_read(line)

    def _check_length(self) -> None:
        if self._state in (HEAD, TRAILER):
            if self._head_bytes + len(self._line) > MAX_HEAD_BYTES:
                raise BadRequestError("a request head or trailer longer than 64 KiB")
        elif len(self._line) > MAX_CHUNK_LINE_BYTES:
            raise BadRequestError("a chunk-size line longer than 4 KiB")

    def _line_read(self, line: bytes) -> None:
        if not line.endswith(b"\r\n"):
            raise BadRequestError("a line that ends in a bare LF")
        text = line[:-2]
        if b"\r" in text:
            raise BadRequestError("a bare CR")
        if self._state == HEAD:
            self._head_line(text, len(line))
        elif self._state == CHUNK_SIZE:
            self._chunk_size(text)
        elif self._state == CHUNK_END:
            if text:
                raise BadRequestError("chunk data not followed by CRLF")
            self._state = CHUNK_SIZE
        elif text:  # TRAILER
            self._field_line(text)
            self._head_bytes += len(line)
        else:
            self._head_bytes = 0
            self._state = HEAD

    def _head_line(self, text: bytes, size: int) -> None:
        if text:
            if self._head:  # a field line (the first line is the request line)
                self._field_line(text)
            self._head.append(text)
            self._head_bytes += size
            return
        if not self._head:
            raise BadRequestError("an empty line where the request line belongs")
        request_line, *fields = self._head
        self._head, self._head_bytes = [], 0
        parts = request_line.split(b" ")
        if len(parts) != 3 or parts[2] not in VERSIONS:
            raise BadRequestError("a malformed request line")
        headers = [(name.lower(), value.strip(b" \t")) for name, _, value in (f.partition(b":") for f in fields)]
        check_request_head(parts[1], VERSIONS[parts[2]], headers)
        self._state = HEAD
        for name, value in headers:
            if name == b"transfer-encoding":
                self._state = CHUNK_SIZE
            elif name == b"content-length" and int(value):
                self._state, self._remaining = BODY, int(value)
        self._on_head_end()

    def _field_line(self, text: bytes) -> None:
        if text[:1] in (b" ", b"\t"):
            raise BadRequestError("an obs-folded header line")
        name, colon, value = text.partition(b":")
        if not colon or not TOKEN.fullmatch(name):
            raise BadRequestError("a malformed header line")
        if CONTROL_IN_VALUE.search(value):
            raise BadRequestError("a control character in a header value")

    def _chunk_size(self, text: bytes) -> None:
        match = CHUNK_SIZE_LINE.fullmatch(text)
        if match is None:
            raise BadRequestError("a malformed chunk-size line")
        digits = match[1].lstrip(b"0")
        if len(digits) > 16 or int(digits or b"0", 16) > MAX_CHUNK_SIZE:
            raise BadRequestError("a chunk size that overflows 63 bits")
        size = int(digits or b"0", 16)
        if size:
            self._state, self._remaining = CHUNK_DATA, size
        else:
            self._state = TRAILER
