"""Deterministic generators of hostile input for tests/e2e/test_fuzz.py: stdin lines for `truloop-mcp` over stdio,
and request bodies for `POST /api/v1/agent/tool-message`. Each case says what the server must answer."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

UNAUTHORIZED = -32000
UNKNOWN_CALL = -32003
ALREADY_ANSWERED = -32004
TOO_LARGE = -32005

NESTING_DEPTHS = (1000, 1500, 5000, 20000, 100000)
MAX_HTTP_BODY = 256 * 1024


def strict_loads(text: str | bytes) -> Any:
    """RFC 8259 JSON only (Python's json also takes NaN and Infinity)."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def is_json(data: bytes) -> bool:
    try:
        strict_loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return True


def dumps(value: Any) -> bytes:
    """Compact JSON; lone surrogates and control characters come out as escapes (so never a raw newline)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()


# -- building blocks ---------------------------------------------------------------------------

WEIRD_TEXT = (
    "",
    " ",
    "a\x00b",
    "\x00",
    "\ufffe\uffff",
    "emoji 🙂👍🏽 family 👨‍👩‍👧",
    "한국어 日本語 中文",
    "مرحبا עברית",
    "e\u0301\u0301\u0301",
    "\u202eright-to-left",
    "line\nbreak\r\ttab",
    "\u2028\u2029",
    "' OR 1=1 --",
    '"; DROP TABLE memories; --',
    "%s%n%x{0}{}",
    "../../../../etc/passwd",
    "<script>alert(1)</script>",
    "NaN",
    "2026-02-30",
    "2026-03-10",
    "9999-99-99",
    "Asia/Seoul",
    "Not/AZone",
    "*",
    "OR",
    'NEAR("a" "b")',
    "alice",
)


LONE_SURROGATES = ("\ud800", "\udfff tail", "a\udc80b", "\ud83d")
"""Grammatical JSON string escapes (RFC 8259 section 8.2) that no UTF-8 text can hold: kept to their own class."""

KEYS = (*WEIRD_TEXT, "k", "id", "query")


def junk_value(rng: random.Random, depth: int = 0) -> Any:
    """A value of any JSON type, sometimes nested, sometimes large."""
    roll = rng.random()
    if roll < 0.28:
        return rng.choice(WEIRD_TEXT)
    if roll < 0.36:
        return rng.choice([0, -1, 1, 2**31, -(2**63), 2**64 + 7, 10**30])
    if roll < 0.42:
        return rng.choice([0.5, -1e308, 1e308, 3.0, -0.0, 1e-320])
    if roll < 0.48:
        return rng.choice([True, False])
    if roll < 0.53:
        return None
    if roll < 0.55:
        return rng.choice("xé한🙂\x00") * rng.choice([1_000, 1_000, 10_000, 100_000])
    if roll < 0.60:
        return "".join(chr(rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0xA0, 0xD7FF)])) for _ in range(40))
    if depth > 6:
        return "leaf"
    if roll < 0.80:
        return [junk_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    return {rng.choice(KEYS): junk_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}


TOOL_KEYS: dict[str, tuple[str, ...]] = {
    "get_day_of_week": ("date",),
    "get_current_datetime": ("timezone",),
    "get_user_profile": ("user_id",),
    "search_users": ("query", "by"),
    "get_user_eids": ("identifiers",),
    "search_knowledge_base": ("query", "limit"),
    "save_memory": ("content", "tags"),
    "search_memories": ("query", "limit"),
    "forget_memory": ("memory_id",),
    "get_inbox": ("unread_only", "limit"),
    "get_events": ("start", "end"),
    "create_event": ("title", "start", "end", "timezone", "invitees", "availability_deadline"),
    "update_event": ("event_id", "title", "start", "end"),
    "invite_to_event": ("event_id", "invitees"),
    "delete_event": ("event_id",),
}
"""Tools that answer in the server (deferred tools, which may wait for a device, and search_places, which may
reach the internet when a key is set, are left out)."""


def tool_arguments(rng: random.Random, tool: str) -> Any:
    roll = rng.random()
    if roll < 0.05:
        return junk_value(rng)  # arguments that are not an object at all
    keys = TOOL_KEYS.get(tool, ("query",))
    arguments: dict[str, Any] = {}
    for key in keys:
        if rng.random() < 0.75:
            arguments[key] = junk_value(rng)
    if rng.random() < 0.2:
        arguments[rng.choice(WEIRD_TEXT) or "extra"] = junk_value(rng)
    return arguments


# -- stdio -------------------------------------------------------------------------------------

NO_REPLY = "no reply"
NULL_ERROR = "error with id null"
ID_REPLY = "one reply with the id"


@dataclass(frozen=True)
class StdioCase:
    kind: str
    data: bytes
    expect: str
    code: int | None = None  # NULL_ERROR: the code; ID_REPLY: None (result or any error) or a required error code
    codes: frozenset[int] = field(default_factory=frozenset)  # ID_REPLY: any of these error codes
    request_id: int | str | None = None
    result: bool = False  # ID_REPLY: must be a result (not an error)


class Ids:
    """Unique valid ids of both types (no string id spells an integer one, so none can be confused)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._n = 1000

    def __call__(self) -> int | str:
        self._n += 1
        roll = self._rng.random()
        if roll < 0.4:
            return self._n
        if roll < 0.45:
            return -self._n
        if roll < 0.5:
            return 2**70 + self._n  # beyond 64 bits: still an integer id
        suffix = self._rng.choice(["", "-🙂", "-한글", "-\x00nul", '-"quoted"', "-\\back", "-" + "z" * 300])
        return f"req-{self._n}{suffix}"


def request(request_id: Any, method: Any, params: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    message.update(extra)
    return message


def _strict_invalid_prefix(rng: random.Random, data: bytes) -> bytes:
    for _ in range(20):
        cut = data[: rng.randrange(1, len(data))]
        if cut.strip() and not is_json(cut):
            return cut
    return data[:1]


def _not_json(rng: random.Random) -> bytes:
    choices = [
        b"this is not json",
        b"{oops",
        b"{'single': 'quotes'}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
        b'{"a" 1}',
        b"[1, 2,, 3]",
        b"tru",
        b"nul",
        b"01",
        b'"unterminated',
        b'"bad escape \\x41"',
        b"\x1b[31mred\x1b[0m",
        b"Content-Length: 52",
        b"GET / HTTP/1.1",
        b"}{",
        b'{"jsonrpc":"2.0"}{"jsonrpc":"2.0"}',
        b"// comment",
        b"\xef\xbb\xbf{}",  # a byte-order mark is not JSON
    ]
    if rng.random() < 0.6:
        return rng.choice(choices)
    text = "".join(chr(rng.randrange(0x21, 0x7F)) for _ in range(rng.randrange(1, 200)))
    data = ("#" + text).encode()
    return data


def _bad_utf8(rng: random.Random) -> bytes:
    pieces = [
        b"\xff",
        b"\xfe",
        b"\xc3\x28",
        b"\xa0\xa1",
        b"\xe2\x28\xa1",
        b"\xf0\x28\x8c\xbc",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xf8\x88\x80\x80\x80",
        b"\x80",
        b"\xf4\x90\x80\x80",
    ]
    roll = rng.random()
    if roll < 0.4:
        return b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
    if roll < 0.6:
        raw = bytes(rng.choice([b for b in range(256) if b not in (0x0A, 0x0D)]) for _ in range(rng.randrange(4, 400)))
        return b"\xff" + raw
    # a JSON-RPC request whose string holds bytes that are not UTF-8: still not UTF-8 JSON
    template = dumps(request(7, "tools/call", {"name": "search_memories", "arguments": {"query": "@@"}}))
    return template.replace(b"@@", rng.choice(pieces) + b"x")


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice(NESTING_DEPTHS)
    shape = rng.choice(["array", "object", "array-open", "object-open", "in-request"])
    if shape == "array":
        return b"[" * depth + b"]" * depth
    if shape == "object":
        return b'{"a":' * depth + b"1" + b"}" * depth
    if shape == "array-open":
        return b"[" * depth
    if shape == "object-open":
        return b'{"a":' * depth
    # deep junk where a request would be: the line as a whole is too deep to parse
    return b'{"jsonrpc":"2.0","method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"


def _not_a_message(rng: random.Random) -> bytes:
    """JSON that is not a JSON-RPC message and carries no usable id."""
    values: list[Any] = [
        [],
        [1, 2, 3],
        [{"jsonrpc": "2.0", "method": "ping"}],
        0,
        -1.5,
        "ping",
        True,
        None,
        {},
        {"hello": "world"},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "1.0", "method": "ping"},
        {"jsonrpc": 2.0, "method": "ping"},
        {"jsonrpc": "2.0", "method": 42},
        {"jsonrpc": "2.0", "method": None},
        {"jsonrpc": "2.0", "method": "ping", "params": "not structured"},
        {"jsonrpc": "2.0", "result": {}},
        {"method": "tools/call", "params": {"name": "get_day_of_week"}},
    ]
    value = rng.choice(values)
    if isinstance(value, dict) and rng.random() < 0.3:
        value = {**value, "junk": junk_value(rng)}
    return dumps(value)


def _bad_id(rng: random.Random) -> tuple[str, bytes]:
    bad = rng.choice([1.5, 7.0, -0.0, 1e300, True, False, None, {}, {"id": 1}, [], [1], ["x"]])
    method = rng.choice(["ping", "tools/list", "tools/call", "no/such/method", "initialize"])
    params = {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}} if method == "tools/call" else None
    return type(bad).__name__, dumps(request(bad, method, params))


def _invalid_with_id(rng: random.Random, request_id: int | str) -> tuple[dict[str, Any], frozenset[int]]:
    """A message with a usable id that is still not a valid JSON-RPC request."""
    only = frozenset({INVALID_REQUEST})
    either = frozenset({INVALID_REQUEST, INVALID_PARAMS})
    return rng.choice(
        [
            ({"id": request_id, "method": "ping"}, only),  # no jsonrpc member
            ({"jsonrpc": "1.0", "id": request_id, "method": "ping"}, only),
            ({"jsonrpc": 2, "id": request_id, "method": "ping"}, only),
            ({"jsonrpc": "2.0", "id": request_id}, only),  # neither method nor result
            ({"jsonrpc": "2.0", "id": request_id, "method": 7}, only),
            ({"jsonrpc": "2.0", "id": request_id, "method": ["tools/call"]}, only),
            ({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": "x"}, either),
            ({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": 5}, either),
            ({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": [1, 2]}, either),
        ]
    )


def _tool_call(rng: random.Random, request_id: int | str) -> dict[str, Any]:
    roll = rng.random()
    tool = rng.choice([*TOOL_KEYS, *TOOL_KEYS])
    if roll < 0.04:
        return request(request_id, "tools/call", junk_value(rng) or {"junk": 1})
    if roll < 0.08:
        return request(request_id, "tools/call", {"name": junk_value(rng), "arguments": {}})
    if roll < 0.12:
        return request(request_id, "tools/call", {"name": rng.choice(WEIRD_TEXT) + "_no_such_tool", "arguments": {}})
    params: dict[str, Any] = {"name": tool, "arguments": tool_arguments(rng, tool)}
    if rng.random() < 0.1:
        params["_meta"] = junk_value(rng)
    return request(request_id, "tools/call", params)


def _notification(rng: random.Random) -> bytes:
    method = rng.choice(
        [
            "notifications/initialized",
            "notifications/roots/list_changed",
            "notifications/progress",
            "notifications/cancelled",
            "notifications/no-such-thing",
            "something/else",
        ]
    )
    params: Any = None
    if method == "notifications/cancelled":
        params = {"requestId": f"never-sent-{rng.randrange(10**6)}", "reason": rng.choice(WEIRD_TEXT)}
    elif rng.random() < 0.6:
        params = {"progressToken": "t", "progress": 1} if method == "notifications/progress" else {"x": junk_value(rng)}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return dumps(message)


def stdio_cases(seed: int, count: int = 3000, oversized: int = 3, oversized_bytes: int = 5_000_000) -> list[StdioCase]:
    """`count` lines in a seeded mix, plus `oversized` lines of `oversized_bytes` (never valid JSON-RPC, so a
    parse error whether or not they exceed the server's line limit)."""
    rng = random.Random(seed)
    new_id = Ids(rng)

    def answered(
        kind: str, message: dict[str, Any], *, codes: frozenset[int] = frozenset(), result: bool = False
    ) -> StdioCase:
        return StdioCase(kind, dumps(message), ID_REPLY, codes=codes, request_id=message["id"], result=result)

    def not_json() -> StdioCase:
        return StdioCase("not JSON", _not_json(rng), NULL_ERROR, PARSE_ERROR)

    def nonstandard() -> StdioCase:
        data = rng.choice(
            [
                b"NaN",
                b"Infinity",
                b"-Infinity",
                b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":"nan-line","method":"ping","params":{"x":Infinity}}',
            ]
        )
        return StdioCase("NaN/Infinity (not JSON)", data, NULL_ERROR, PARSE_ERROR)

    def truncated() -> StdioCase:
        source = rng.choice([request(new_id(), "ping"), _tool_call(rng, new_id()), {"jsonrpc": "2.0", "method": "x"}])
        return StdioCase("truncated JSON", _strict_invalid_prefix(rng, dumps(source)), NULL_ERROR, PARSE_ERROR)

    def bad_utf8() -> StdioCase:
        return StdioCase("invalid UTF-8", _bad_utf8(rng), NULL_ERROR, PARSE_ERROR)

    def deep() -> StdioCase:
        return StdioCase("deeply nested", _deep(rng), NULL_ERROR, PARSE_ERROR)

    def not_a_message() -> StdioCase:
        return StdioCase("JSON, not a JSON-RPC message", _not_a_message(rng), NULL_ERROR, INVALID_REQUEST)

    def bad_id() -> StdioCase:
        name, data = _bad_id(rng)
        return StdioCase(f"id of type {name}", data, NULL_ERROR, INVALID_REQUEST)

    def invalid_with_id() -> StdioCase:
        message, codes = _invalid_with_id(rng, new_id())
        return answered("invalid request with a valid id", message, codes=codes)

    def unknown_method() -> StdioCase:
        method = rng.choice(["no/such", "tools/destroy", "", "TOOLS/LIST", "rpc.discover", "🙂", "a" * 5000])
        return answered(
            "unknown method",
            request(new_id(), method, rng.choice([None, {}, {"x": 1}])),
            codes=frozenset({METHOD_NOT_FOUND}),
        )

    def plain() -> StdioCase:
        method = rng.choice(["ping", "ping", "ping", "tools/list"])
        return answered(f"{method} request", request(new_id(), method), result=True)

    def tool_call() -> StdioCase:
        return answered("tools/call with fuzzed arguments", _tool_call(rng, new_id()))

    def lone_surrogate() -> StdioCase:
        tool = rng.choice(["search_memories", "save_memory", "search_users", "get_day_of_week", "get_current_datetime"])
        key = TOOL_KEYS[tool][0]
        message = request(new_id(), "tools/call", {"name": tool, "arguments": {key: rng.choice(LONE_SURROGATES)}})
        return answered("tools/call with a lone surrogate escape in its arguments", message)

    def notification() -> StdioCase:
        return StdioCase("notification", _notification(rng), NO_REPLY)

    def stray_response() -> StdioCase:
        request_id = new_id()
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if rng.random() < 0.5:
            body["result"] = {"junk": junk_value(rng)}
        else:
            body["error"] = {"code": -32000, "message": "stray"}
        return StdioCase("response to nothing", dumps(body), NO_REPLY, request_id=request_id)

    mix: list[tuple[Callable[[], StdioCase], float]] = [
        (not_json, 9),
        (nonstandard, 1),
        (truncated, 8),
        (bad_utf8, 8),
        (deep, 2),
        (not_a_message, 7),
        (bad_id, 9),
        (invalid_with_id, 6),
        (unknown_method, 5),
        (plain, 4),
        (tool_call, 30),
        (lone_surrogate, 1),
        (notification, 5),
        (stray_response, 2),
    ]
    makers, weights = zip(*mix, strict=True)
    cases = [rng.choices(makers, weights)[0]() for _ in range(count)]
    for n in range(oversized):
        filler = (b"#", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', b"[" * 64)[n % 3]
        data = filler + b"x" * (oversized_bytes - len(filler))
        cases.insert(rng.randrange(len(cases) + 1), StdioCase("oversized line", data, NULL_ERROR, PARSE_ERROR))
    return cases


def oversized_requests(seed: int, size: int, count: int) -> list[StdioCase]:
    """Valid requests longer than the server's line limit `size`: refused unread, with a parse error."""
    rng = random.Random(seed)
    cases = []
    for n in range(count):
        body = request(f"oversized-{n}", "tools/call", {"name": "save_memory", "arguments": {"content": "y" * size}})
        cases.append(StdioCase("oversized line (valid request)", dumps(body), NULL_ERROR, PARSE_ERROR))
    rng.shuffle(cases)
    return cases


# -- POST /api/v1/agent/tool-message -------------------------------------------------------------


@dataclass(frozen=True)
class HttpCase:
    kind: str
    body: bytes
    auth: str  # "alice", "bob", "none", "garbage", "wrong-secret", "expired", "basic"
    content_type: str | None
    status: int
    code: int
    chunked: bool = False  # sent with Transfer-Encoding: chunked (no Content-Length)
    also: tuple[tuple[int, int], ...] = ()  # other acceptable (status, code) pairs

    def accepts(self, status: int, code: Any) -> bool:
        return (status, code) == (self.status, self.code) or (status, code) in self.also


def http_cases(seed: int, call_id: str, count: int = 1000) -> list[HttpCase]:
    """Bodies a device (or an attacker) might post while `call_id` (alice's) is pending; none may answer it."""
    rng = random.Random(seed)

    def envelope(request_id: Any, **members: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, **members}

    invalid_results: list[Any] = [
        {"confirmed": "yes"},
        {"confirmed": "true"},
        {"confirmed": "on"},
        {"confirmed": 1},
        {"confirmed": 0},
        {"confirmed": "false"},
        {"confirmed": None},
        {"confirmed": [True]},
        {"confirmed": {"value": True}},
        {"confirmed": 1.0},
        {"confirmed": "x" * 200_000},
        {},
        {"confirm": True},
        {"Confirmed": True},
        1,
        0,
        "on",
        "yes",
        True,
        None,
        [],
        [{"confirmed": True}],
        "\x00",
    ]

    def real_id_invalid_result() -> HttpCase:
        body = dumps(envelope(call_id, result=rng.choice(invalid_results)))
        return HttpCase("real id, invalid result", body, "alice", "application/json", 422, INVALID_PARAMS)

    def lone_surrogate() -> HttpCase:
        """Grammatical JSON that no UTF-8 text can hold: refused as not JSON, or read and refused for what it says."""
        text = rng.choice(LONE_SURROGATES)
        if rng.random() < 0.5:
            body = dumps(envelope(call_id, result={"confirmed": text}))
            return HttpCase("lone surrogate in the result", body, "alice", "application/json", 422, INVALID_PARAMS,
                            also=((400, PARSE_ERROR),))  # fmt: skip
        body = dumps(envelope(text, result={"confirmed": True}))
        return HttpCase("lone surrogate as the id", body, "alice", "application/json", 404, UNKNOWN_CALL,
                        also=((400, PARSE_ERROR),))  # fmt: skip

    def not_a_response() -> HttpCase:
        bodies: list[Any] = [
            envelope(call_id),  # neither result nor error
            envelope(call_id, result={"confirmed": True}, error={"code": -32001, "message": "m"}),
            envelope(call_id, method="interaction.confirm"),
            envelope(call_id, method="interaction.confirm", params={}, result={"confirmed": True}),
            {"id": call_id, "result": {"confirmed": True}},  # no jsonrpc member
            {"jsonrpc": "1.0", "id": call_id, "result": {"confirmed": True}},
            {"jsonrpc": 2.0, "id": call_id, "result": {"confirmed": True}},
            {"jsonrpc": "2.0", "result": {"confirmed": True}},  # no id
            envelope(call_id, error={"code": "x", "message": "m"}),
            envelope(call_id, error={"code": -32001}),
            envelope(call_id, error={"message": "m"}),
            envelope(call_id, error="denied"),
            [envelope(call_id, result={"confirmed": True})],  # a batch
            [],
            {},
            None,
            1,
            "string",
            True,
        ]
        body = dumps(rng.choice(bodies))
        return HttpCase("not a JSON-RPC response", body, "alice", "application/json", 400, INVALID_REQUEST)

    def bad_id_type() -> HttpCase:
        bad = rng.choice([None, 1.5, 1.0, -0.0, True, False, {}, {"id": call_id}, [], [call_id]])
        body = dumps(envelope(bad, result={"confirmed": True}))
        return HttpCase(f"id of type {type(bad).__name__}", body, "alice", "application/json", 400, INVALID_REQUEST)

    def wrong_id() -> HttpCase:
        other = rng.choice(
            [
                call_id.upper(),
                call_id + " ",
                " " + call_id,
                call_id[:-1],
                call_id + "\x00",
                "call_" + "0" * 32,
                "",
                "🙂",
                "x" * 10_000,
                0,
                -1,
                2**70,
                rng.randrange(10**9),
            ]
        )
        result = rng.choice([{"confirmed": True}, {"confirmed": "yes"}, 1])
        body = dumps(envelope(other, result=result))
        return HttpCase("unknown call id", body, "alice", "application/json", 404, UNKNOWN_CALL)

    def stranger() -> HttpCase:
        body = dumps(envelope(call_id, result=rng.choice([{"confirmed": True}, {"confirmed": False}, {"x": 1}])))
        return HttpCase("another user's token, real id", body, "bob", "application/json", 404, UNKNOWN_CALL)

    def stranger_error() -> HttpCase:
        body = dumps(envelope(call_id, error={"code": -32001, "message": "PermissionDenied"}))
        return HttpCase(
            "another user's token, real id, device error", body, "bob", "application/json", 404, UNKNOWN_CALL
        )

    def no_token() -> HttpCase:
        body = rng.choice([dumps(envelope(call_id, result={"confirmed": True})), b"{oops", b"\xff\xfe", b""])
        auth = rng.choice(["none", "garbage", "wrong-secret", "expired", "basic"])
        return HttpCase(f"token: {auth}", body, auth, "application/json", 401, UNAUTHORIZED)

    def not_json() -> HttpCase:
        choices = [
            b"",
            b"{oops",
            b"not json at all",
            b"{'a': 1}",
            b'{"jsonrpc":"2.0",}',
            b"\xef\xbb\xbf{}",
            b"[",
            b'"',
        ]
        body = rng.choice(choices)
        if rng.random() < 0.4:
            body = _strict_invalid_prefix(rng, dumps(envelope(call_id, result={"confirmed": True})))
        if rng.random() < 0.15:
            nan = rng.choice([b"NaN", b"Infinity", b"-Infinity"])
            body = b'{"jsonrpc":"2.0","id":"' + call_id.encode() + b'","result":{"confirmed":' + nan + b"}}"
            return HttpCase("NaN/Infinity (not JSON)", body, "alice", "application/json", 400, PARSE_ERROR)
        return HttpCase("not JSON", body, "alice", "application/json", 400, PARSE_ERROR)

    def bad_utf8() -> HttpCase:
        if rng.random() < 0.5:
            body = _bad_utf8(rng)
        else:
            body = dumps(envelope(call_id, result={"confirmed": True, "note": "@@"})).replace(b"@@", b"\xff\xc3\x28")
        return HttpCase("invalid UTF-8", body, "alice", "application/json", 400, PARSE_ERROR)

    def deep() -> HttpCase:
        depth = rng.choice(NESTING_DEPTHS)
        shape = rng.choice(["array", "array-open", "object", "in-result"])
        if shape == "array":
            body = b"[" * depth + b"]" * depth
        elif shape == "array-open":
            body = b"[" * depth
        elif shape == "object":
            body = b'{"a":' * depth + b"1" + b"}" * depth
        else:
            head = b'{"jsonrpc":"2.0","id":"' + call_id.encode() + b'","result":{"confirmed":'
            body = head + b"[" * depth + b"]" * depth + b"}}"
        if len(body) > MAX_HTTP_BODY:
            return HttpCase("deeply nested, over 256 KiB", body, "alice", "application/json", 413, TOO_LARGE)
        return HttpCase("deeply nested", body, "alice", "application/json", 400, PARSE_ERROR)

    def wrong_content_type() -> HttpCase:
        inner = rng.choice([real_id_invalid_result, not_a_response, wrong_id, not_json, stranger])()
        content_type = rng.choice(
            [
                None,
                "text/plain",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "application/json; charset=latin-1",
                "application/xml",
            ]
        )
        return HttpCase(
            f"content type {content_type!r} ({inner.kind})",
            inner.body,
            inner.auth,
            content_type,
            inner.status,
            inner.code,
        )

    def huge() -> HttpCase:
        size = MAX_HTTP_BODY + rng.choice([1, 1024, 1_000_000])
        head = b'{"jsonrpc":"2.0","id":"' + call_id.encode() + b'","result":{"confirmed":true,"pad":"'
        body = head + b"x" * (size - len(head) - 3) + b'"}}'
        if rng.random() < 0.5:
            return HttpCase("body over 256 KiB", body, "alice", "application/json", 413, TOO_LARGE)
        return HttpCase("body over 256 KiB, chunked", body, "alice", "application/json", 413, TOO_LARGE, chunked=True)

    mix: list[tuple[Callable[[], HttpCase], float]] = [
        (real_id_invalid_result, 20),
        (not_a_response, 12),
        (lone_surrogate, 2),
        (bad_id_type, 8),
        (wrong_id, 10),
        (stranger, 5),
        (stranger_error, 2),
        (no_token, 8),
        (not_json, 8),
        (bad_utf8, 6),
        (deep, 4),
        (wrong_content_type, 6),
        (huge, 1),
    ]
    makers, weights = zip(*mix, strict=True)
    return [rng.choices(makers, weights)[0]() for _ in range(count)]
