"""Bounded fuzzing of the two doors hostile bytes come through: stdin of `truloop-mcp` (stdio), and a device's
`POST /api/v1/agent/tool-message`. A fixed seed makes every run the same; each test prints it when it fails.

stdio: the process lives, every request with a valid (integer or string) id gets exactly one reply with that id,
every malformed line gets one error with `id: null` (-32700 not UTF-8 JSON / too deep / too long, -32600 JSON that
is not a JSON-RPC message or whose id is not a string or integer), notifications get none, and end of input ends
the process cleanly. HTTP: never a 5xx, every refusal is the documented 4xx with a JSON-RPC error body, and the
pending call is left pending (a valid answer at the end still completes it).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.fuzz_inputs import (
    ID_REPLY,
    NO_REPLY,
    NULL_ERROR,
    PARSE_ERROR,
    HttpCase,
    StdioCase,
    dumps,
    http_cases,
    oversized_requests,
    stdio_cases,
)
from tests.support import INIT, INITIALIZED, SECRET, TRULOOP, child_env, http_server_process, mcp_client, token

pytestmark = pytest.mark.slow

SEED = 20260310
STDIO_LINES = 3000
HTTP_BODIES = 1000
LINE_LIMIT = 1024 * 1024  # above every generated line but the oversized ones

FINAL = {
    "jsonrpc": "2.0",
    "id": "final",
    "method": "tools/call",
    "params": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}},
}


# -- stdio -------------------------------------------------------------------------------------


class Pipe:
    """Reads a child's stdout (as JSON lines) and stderr on threads, so no pipe ever fills up."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.replies: list[Any] = []
        self.garbage: list[bytes] = []
        self.stderr = bytearray()
        self.seen: dict[Any, threading.Event] = defaultdict(threading.Event)
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                reply = json.loads(raw.decode("utf-8"))
            except ValueError:
                self.garbage.append(raw[:300])
                continue
            self.replies.append(reply)
            if isinstance(reply, dict) and isinstance(reply.get("id"), str):
                with self._lock:
                    self.seen[reply["id"]].set()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            if len(self.stderr) < 4_000_000:
                self.stderr += raw

    def wait_for(self, request_id: str, timeout: float) -> bool:
        with self._lock:
            event = self.seen[request_id]
        return event.wait(timeout)

    def reply(self, request_id: str) -> Any:
        return next((r for r in self.replies if isinstance(r, dict) and r.get("id") == request_id), None)

    def join(self, timeout: float) -> None:
        for thread in self._threads:
            thread.join(timeout)


def line_limit_flag() -> str | None:
    """The command-line flag bounding a stdin line, once the server has one (e.g. `--max-line-bytes`)."""
    help_text = subprocess.run([TRULOOP, "--help"], capture_output=True, text=True, timeout=30, env=child_env()).stdout
    match = re.search(r"--[a-z-]*(?:max-line|line-(?:bytes|limit|size))[a-z-]*", help_text)
    return match.group(0) if match else None


def too_long(case: StdioCase) -> StdioCase:
    """A line over the limit is refused unread, whatever it holds."""
    if len(case.data) <= LINE_LIMIT or case.kind.startswith("oversized"):
        return case
    return StdioCase(f"oversized line ({case.kind})", case.data, NULL_ERROR, PARSE_ERROR)


def id_key(value: Any) -> tuple[str, Any]:
    return type(value).__name__, value


def write_all(proc: subprocess.Popen[bytes], cases: list[StdioCase], progress: list[int]) -> None:
    assert proc.stdin is not None
    try:
        for index, case in enumerate(cases):
            proc.stdin.write(case.data + b"\n")
            progress[0] = index + 1
        proc.stdin.write(dumps(FINAL) + b"\n")
        proc.stdin.flush()
        progress[0] = len(cases) + 1
    except OSError:  # the server is gone; the assertions say so
        pass


def check_replies(cases: list[StdioCase], replies: list[Any]) -> list[str]:
    """What the replies got wrong, grouped by input class."""
    problems: Counter[str] = Counter()
    examples: dict[str, str] = {}

    def note(problem: str, example: Any) -> None:
        problems[problem] += 1
        examples.setdefault(problem, repr(example)[:300])

    by_id: dict[tuple[str, Any], list[dict[str, Any]]] = defaultdict(list)
    null_codes: Counter[Any] = Counter()
    for reply in replies:
        if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0":
            note("a stdout line that is not a JSON-RPC object", reply)
            continue
        if "method" in reply:
            continue  # a notification from the server, not a reply
        if ("result" in reply) == ("error" in reply) or "id" not in reply:
            note("a reply without exactly one of result/error, or without id", reply)
            continue
        error = reply.get("error")
        if error is not None and (
            not isinstance(error, dict)
            or not isinstance(error.get("code"), int)
            or not isinstance(error.get("message"), str)
        ):
            note("an error reply whose error is not {code: int, message: str}", reply)
        if reply["id"] is None:
            null_codes[error.get("code") if isinstance(error, dict) else "result"] += 1
        else:
            by_id[id_key(reply["id"])].append(reply)

    expected_null: Counter[Any] = Counter()
    null_kinds: dict[Any, Counter[str]] = defaultdict(Counter)
    known: set[tuple[str, Any]] = {id_key(INIT["id"]), id_key(FINAL["id"])}
    for case in cases:
        if case.expect == NULL_ERROR:
            expected_null[case.code] += 1
            null_kinds[case.code][case.kind] += 1
            continue
        if case.request_id is None:
            continue  # a notification: it may only show up as an extra null reply, checked below
        key = id_key(case.request_id)
        known.add(key)
        got = by_id.get(key, [])
        if case.expect == NO_REPLY:
            if got:
                note(f"[{case.kind}] got a reply (expected none)", got[0])
            continue
        assert case.expect == ID_REPLY
        if len(got) != 1:
            note(f"[{case.kind}] expected exactly one reply with its id, got {len(got)}", case.data[:200])
            continue
        reply = got[0]
        if case.result and "result" not in reply:
            note(f"[{case.kind}] expected a result", reply)
        if case.codes and (reply.get("error") or {}).get("code") not in case.codes:
            note(f"[{case.kind}] expected an error with code in {sorted(case.codes)}", reply)
        if "result" in reply and b'"tools/call"' in case.data:
            result = reply["result"]
            if not isinstance(result, dict) or not isinstance(result.get("content"), list):
                note(f"[{case.kind}] a tools/call result that is not a CallToolResult", reply)

    for key, got in by_id.items():
        if key not in known:
            note("a reply with an id no valid request carried (a malformed line answered as a request?)", got[0])
        elif key in (id_key(INIT["id"]), id_key(FINAL["id"])) and len(got) != 1:
            note("init/final answered more than once", got)

    out = [f"{count} x {problem}; e.g. {examples[problem]}" for problem, count in problems.most_common()]
    if null_codes != expected_null:
        for code in sorted(set(null_codes) | set(expected_null), key=str):
            if null_codes[code] != expected_null[code]:
                sources = dict(null_kinds.get(code, Counter()))
                out.append(
                    f"replies with id null and code {code}: expected {expected_null[code]} "
                    f"(from {sources}), got {null_codes[code]}"
                )
    return out


def test_stdio_survives_fuzzed_lines(tmp_path: Path) -> None:
    started = time.monotonic()
    flag = line_limit_flag()
    cases = stdio_cases(SEED, STDIO_LINES, oversized=0 if flag else 3)
    args = ["--data-dir", str(tmp_path / "data"), "--timezone", "Asia/Seoul"]
    if flag:  # a limit of our own: oversized lines stay cheap, and valid requests beyond it are refused too
        args += [flag, str(LINE_LIMIT)]
        extra = stdio_cases(SEED + 1, 0, oversized=3, oversized_bytes=2 * LINE_LIMIT)
        extra += oversized_requests(SEED, LINE_LIMIT + 1, 3)
        cases = [too_long(case) for case in cases[:1000] + extra + cases[1000:]]
    proc = subprocess.Popen(
        [TRULOOP, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(PYTHONIOENCODING="utf-8:strict"),
    )
    assert proc.stdin is not None
    pipe = Pipe(proc)
    context = f"seed={SEED}"
    try:
        proc.stdin.write(dumps(INIT) + b"\n")
        proc.stdin.flush()
        assert pipe.wait_for("init", 20), f"{context}: no reply to initialize: {bytes(pipe.stderr[-2000:])!r}"
        proc.stdin.write(dumps(INITIALIZED) + b"\n")

        progress = [0]
        writer = threading.Thread(target=write_all, args=(proc, cases, progress), daemon=True)
        writer.start()
        writer.join(35)
        answered = pipe.wait_for("final", max(1.0, 45 - (time.monotonic() - started)))
        alive = proc.poll() is None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            returncode: int | None = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            returncode = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        pipe.join(10)

    stderr = bytes(pipe.stderr).decode("utf-8", "replace")
    written = progress[0]
    died = (
        f"the process died after {written} of {len(cases) + 1} lines were written "
        f"(the last: {cases[min(written, len(cases)) - 1].kind!r}); stderr ends: {stderr[-1500:]}"
    )
    silent = f"no reply to the final call ({written} of {len(cases) + 1} lines written); stderr ends: {stderr[-1500:]}"
    assert alive and answered, f"{context}: {died if not alive else silent}"
    final = pipe.reply("final")
    assert final is not None and "result" in final, f"{context}: final call failed: {final}"
    assert final["result"]["structuredContent"]["day_of_week"] == "Tuesday", f"{context}: {final}"
    assert returncode == 0, f"{context}: closing stdin gave exit status {returncode}; stderr ends: {stderr[-1500:]}"
    assert "Traceback" not in stderr, f"{context}: a traceback on stderr: {stderr[stderr.index('Traceback') :][:3000]}"
    assert not pipe.garbage, f"{context}: stdout lines that are not UTF-8 JSON: {pipe.garbage[:3]}"
    problems = check_replies(cases, pipe.replies)
    assert not problems, f"{context}: {len(problems)} kinds of wrong replies:\n" + "\n".join(problems)
    assert time.monotonic() - started < 60, f"{context}: the stdio fuzz took {time.monotonic() - started:.0f} s"


# -- POST /api/v1/agent/tool-message -------------------------------------------------------------


@contextlib.contextmanager
def http_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """`truloop-mcp --transport http` as `tests.support.spawn_http_server` starts it, with stderr going to a file
    (a pipe nobody reads could fill with tracebacks and stall the server) that the test can check."""
    with http_server_process(
        "--data-dir", str(tmp_path / "data"),
        env=child_env(TRULOOP_JWT_SECRET=SECRET), stderr_path=tmp_path / "server.stderr",
    ) as running:  # fmt: skip
        yield running


def authorization(who: str) -> dict[str, str]:
    bearer = {
        "alice": token("alice"),
        "bob": token("bob"),
        "garbage": "nope",
        "wrong-secret": token("alice", secret="another-secret-" + "y" * 32),
        "expired": token("alice", exp=int(time.time()) - 3600),
    }
    if who == "none":
        return {}
    if who == "basic":
        return {"Authorization": "Basic YWxpY2U6cGFzc3dvcmQ="}
    return {"Authorization": f"Bearer {bearer[who]}"}


async def pending_call_id(lines: Any) -> str:
    """The id of the first agent-rpc request on a device stream."""
    async for line in lines:
        if line.startswith("data: "):
            envelope = json.loads(line[len("data: ") :])
            request = json.loads(envelope["data"])
            assert request["method"] == "interaction.confirm", request
            return str(request["id"])
    raise AssertionError("the device stream ended before the call arrived")


async def chunks(body: bytes, size: int = 65536) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def check_response(case: HttpCase, response: httpx.Response) -> str | None:
    if response.status_code >= 500:
        return f"{response.status_code} (a 5xx)"
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} with a body that is not JSON: {response.content[:200]!r}"
    error = body.get("error") if isinstance(body, dict) else None
    if not (
        isinstance(body, dict)
        and body.get("jsonrpc") == "2.0"
        and "id" in body
        and isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        return f"{response.status_code} without a JSON-RPC error body: {response.text[:200]}"
    if not case.accepts(response.status_code, error["code"]):
        got = f"{response.status_code}/{error['code']}"
        return f"expected {case.status}/{case.code}, got {got}: {error['message'][:200]}"
    return None


@pytest.mark.anyio
async def test_tool_message_route_survives_fuzzed_bodies(tmp_path: Path) -> None:
    started = time.monotonic()
    context = f"seed={SEED}"
    answered: dict[str, Any] = {}
    done = anyio.Event()
    with http_server(tmp_path) as (base, proc, log), anyio.fail_after(50):
        async with (
            httpx.AsyncClient(timeout=10) as http,
            http.stream("GET", f"{base}/api/v1/agent/rpc-stream", headers=authorization("alice")) as stream,
            mcp_client(base, token("alice"), "legacy", timeout=60) as client,
            anyio.create_task_group() as tg,
        ):
            assert stream.status_code == 200

            async def confirm() -> None:
                arguments = {"notification_message": "Fuzzing", "title": "Keep it?", "message": "Still pending?"}
                answered["result"] = await client.call_tool("confirm_interaction", arguments)
                done.set()

            tg.start_soon(confirm)
            call_id = await pending_call_id(stream.aiter_lines())

            problems: Counter[str] = Counter()
            examples: dict[str, str] = {}
            first_success: str | None = None
            for case in http_cases(SEED, call_id, HTTP_BODIES):
                headers = authorization(case.auth)
                if case.content_type is not None:
                    headers["Content-Type"] = case.content_type
                url = f"{base}/api/v1/agent/tool-message"
                try:
                    response = await http.post(
                        url, content=chunks(case.body) if case.chunked else case.body, headers=headers
                    )
                except httpx.HTTPError as exc:
                    problem: str | None = f"no response: {type(exc).__name__}"
                else:
                    problem = check_response(case, response)
                    if first_success is None and response.status_code < 300:
                        first_success = f"[{case.kind}] {response.status_code} {response.text[:200]}"
                if problem is not None:
                    label = f"[{case.kind}] {problem.split(':')[0]}"
                    problems[label] += 1
                    examples.setdefault(label, problem[:300])
                if proc.poll() is not None:
                    break

            alive = proc.poll() is None
            health = final = None
            if alive:
                health = (await http.get(f"{base}/healthz")).status_code
                final = await http.post(
                    f"{base}/api/v1/agent/tool-message",
                    content=dumps({"jsonrpc": "2.0", "id": call_id, "result": {"confirmed": False}}),
                    headers={**authorization("alice"), "Content-Type": "application/json"},
                )
                with anyio.fail_after(15):
                    await done.wait()
            tg.cancel_scope.cancel()

    stderr = log.read_text(errors="replace")
    report = "\n".join(f"{count} x {label}; e.g. {examples[label]}" for label, count in problems.most_common())
    assert alive, f"{context}: the server died; stderr ends: {stderr[-1500:]}"
    assert health == 200, f"{context}: /healthz answered {health}"
    assert first_success is None, f"{context}: a fuzzed body was accepted: {first_success}\n{report}"
    assert not problems, f"{context}: {sum(problems.values())} wrong answers:\n{report}"
    assert final is not None
    assert final.status_code == 200, f"{context}: the pending call did not survive: {final.status_code} {final.text}"
    assert final.json() == {"jsonrpc": "2.0", "id": call_id, "result": {"accepted": True}}, context
    result = answered["result"]
    assert not result.is_error and result.structured_content == {"confirmed": False}, f"{context}: {result}"
    assert "Traceback" not in stderr, f"{context}: a traceback in the server log: {stderr[:3000]}"
    assert time.monotonic() - started < 60, f"{context}: the HTTP fuzz took {time.monotonic() - started:.0f} s"
