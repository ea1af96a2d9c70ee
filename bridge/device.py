"""A stand-in for the user's phone on the agent-rpc channel, for demos and end-to-end tests.

    python -m bridge.device --url http://127.0.0.1:8000 --token JWT [--answers FILE.json | --interactive]
                            [--once N] [--no-reconnect]

It listens on `GET /api/v1/agent/rpc-stream` (SSE), answers each JSON-RPC request with
`POST /api/v1/agent/tool-message`, and only prints notifications (`relay.message`), which take
no answer. Delivery is at-least-once, so a request id seen before is not answered twice.

An answers file maps a method to a canned reply: `{"calendar.getEvents": {"result": {...}},
"permissions.getStatus": {"error": {"code": -32010, "message": "PermissionRequired", "data": {...}}}}`;
a method missing from it is answered -32601 Method not found.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn

import anyio
import httpx
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from bridge.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, USER_CANCELED
from toolsets.assistant.permission_tools import PERMISSION_STATES

logger = logging.getLogger("truloop.device")

PROG = "python -m bridge.device"
STREAM_PATH = "/api/v1/agent/rpc-stream"
ANSWER_PATH = "/api/v1/agent/tool-message"
TOKEN_ENV = "TRULOOP_DEVICE_TOKEN"
CONNECT_TIMEOUT_S = 5.0
STREAM_SILENCE_S = 60.0  # the server sends a heartbeat every 15 s: this much silence means the stream is dead
POST_TIMEOUT_S = 10.0
REMEMBERED_IDS = 10_000

Reply = Mapping[str, Any]  # {"result": ...} or {"error": {"code", "message", "data"?}}
Answer = Reply | Callable[[dict[str, Any]], Reply | Awaitable[Reply]]
Answers = Mapping[str, Answer]


class DeviceChannelError(Exception):
    """A failure the simulator cannot get past by reconnecting (bad token, wrong URL, bad answers file)."""


class StreamLost(DeviceChannelError):  # noqa: N818
    """The stream could not be opened or it dropped; reconnecting may help."""


def error_reply(code: int, message: str, data: Any = None) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"error": error}


# -- canned answers --------------------------------------------------------------------------


def sample_calendar(params: Mapping[str, Any]) -> Reply:
    """Two events inside the requested range, in the offset of its startDate."""
    try:
        start = datetime.fromisoformat(str(params["startDate"]))
        end = datetime.fromisoformat(str(params["endDate"])) if params.get("endDate") else start + timedelta(days=1)
    except (KeyError, ValueError):
        return error_reply(INVALID_PARAMS, "Invalid params: startDate and endDate must be ISO 8601 date-times")
    span = end - start if end > start else timedelta(days=1)
    length = min(timedelta(hours=1), span / 4)
    day = start.strftime("%Y%m%d")
    events: list[tuple[str, str, datetime]] = [
        (f"sim-{day}-1", "Team stand-up", start + span / 4),
        (f"sim-{day}-2", "Lunch with Mina", start + span / 2),
    ]
    return {
        "result": {
            "events": [
                {
                    "id": event_id,
                    "title": title,
                    "start": {"dateTime": at.isoformat(timespec="seconds")},
                    "end": {"dateTime": (at + length).isoformat(timespec="seconds")},
                }
                for event_id, title, at in events
            ]
        }
    }


DEFAULT_ANSWERS: Answers = {
    "calendar.getEvents": sample_calendar,
    "interaction.confirm": {"result": {"confirmed": True}},
    "permissions.getStatus": {"result": {"status": "granted"}},
}


def interactive_answers(ask: Callable[[str], str] = input) -> Answers:
    """Answers typed on stdin: the dialog and the permission state; the calendar stays canned."""

    async def prompt(text: str) -> str | None:
        try:
            return (await anyio.to_thread.run_sync(ask, text, abandon_on_cancel=True)).strip()
        except EOFError:
            return None

    async def confirm(params: dict[str, Any]) -> Reply:
        print(f"\n[dialog] {params.get('title', '')}\n         {params.get('message', '')}")
        answer = await prompt(f"Confirm ({params.get('confirmLabel') or 'y'}) / no / cancel? [y/n/c] ")
        if answer is None or answer.lower().startswith("c"):
            return error_reply(USER_CANCELED, "UserCanceled")
        return {"result": {"confirmed": answer.lower().startswith("y")}}

    async def permission(params: dict[str, Any]) -> Reply:
        menu = "  ".join(f"{i}={state}" for i, state in enumerate(PERMISSION_STATES, 1))
        answer = await prompt(f"\n[permission] {params.get('permission', '?')}: {menu} [1] ")
        if answer is None:
            return error_reply(USER_CANCELED, "UserCanceled")
        index = int(answer) - 1 if answer.isdigit() and 1 <= int(answer) <= len(PERMISSION_STATES) else 0
        return {"result": {"status": PERMISSION_STATES[index]}}

    return {"calendar.getEvents": sample_calendar, "interaction.confirm": confirm, "permissions.getStatus": permission}


def load_answers(path: Path) -> dict[str, Reply]:
    """Read and check an answers file; raises DeviceChannelError with what is wrong in it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DeviceChannelError(f"cannot read the answers file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DeviceChannelError(f"the answers file {path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DeviceChannelError(f"the answers file {path} must be a JSON object mapping a method to a reply")
    for method, reply in data.items():
        problem = _reply_problem(reply)
        if problem:
            raise DeviceChannelError(f"the answers file {path}: {method!r} {problem}")
    return data


def _reply_problem(reply: Any) -> str | None:
    if not isinstance(reply, dict) or ("result" in reply) == ("error" in reply):
        return 'must be {"result": ...} or {"error": {"code": int, "message": str}}'
    error = reply.get("error")
    if "error" in reply and not (
        isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str)
    ):
        return 'has an "error" without an integer "code" and a string "message"'
    return None


# -- the simulator ---------------------------------------------------------------------------


class DeviceSimulator:
    """One device of the token's user. `run()` listens until cancelled, or until `once` requests are answered.

    `received` holds every JSON-RPC request and notification seen (duplicates included),
    `answered` one entry per answer posted: {"id", "response", "status", "reply"}.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        answers: Answers | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.answers: Answers = DEFAULT_ANSWERS if answers is None else answers
        self.received: list[dict[str, Any]] = []
        self.envelopes: list[dict[str, Any]] = []
        self.answered: list[dict[str, Any]] = []
        self.connections = 0
        self.connected = anyio.Event()  # set on the first ": connected" of the stream
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._transport = transport
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._replies: dict[Any, dict[str, Any]] = {}  # id -> response body, kept to re-post after a failed post
        self._settled: dict[Any, None] = {}  # ids whose answer the server took or refused (ordered for trimming)

    async def run(self, *, once: int | None = None, reconnect: bool = True) -> None:
        """Listen and answer; with `reconnect`, a lost stream is reopened with backoff (fatal errors still raise)."""
        goal = None if once is None else len(self.answered) + once
        delay = self._initial_backoff
        async with httpx.AsyncClient(transport=self._transport) as client:
            while True:
                connections = self.connections
                try:
                    await self._listen(client, goal)
                    return
                except StreamLost as lost:
                    if not reconnect:
                        raise
                    if self.connections > connections:
                        delay = self._initial_backoff
                    logger.warning("%s; reconnecting in %.1f s", lost, delay)
                    await anyio.sleep(delay)
                    delay = min(delay * 2, self._max_backoff)

    async def _listen(self, client: httpx.AsyncClient, goal: int | None) -> None:
        url = self.base_url + STREAM_PATH
        timeout = httpx.Timeout(STREAM_SILENCE_S, connect=CONNECT_TIMEOUT_S)
        headers = {"Accept": "text/event-stream", **self._auth}
        try:
            async with client.stream("GET", url, headers=headers, timeout=timeout) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise self._refusal(response)
                event_type, data_lines = "message", []
                async for line in response.aiter_lines():
                    if line:
                        if line.startswith(":"):
                            self._on_comment(line[1:].strip())
                            continue
                        field, _, value = line.partition(":")
                        value = value.removeprefix(" ")
                        if field == "event":
                            event_type = value
                        elif field == "data":
                            data_lines.append(value)
                        continue
                    if data_lines and event_type == "agent-rpc":
                        await self._on_envelope(client, "\n".join(data_lines))
                        if goal is not None and len(self.answered) >= goal:
                            return
                    event_type, data_lines = "message", []
        except httpx.ConnectError as exc:
            raise StreamLost(f"cannot connect to {self.base_url} ({exc or 'connection refused'})") from None
        except httpx.ConnectTimeout:
            raise StreamLost(f"cannot connect to {self.base_url} (no answer in {CONNECT_TIMEOUT_S:g} s)") from None
        except httpx.TimeoutException:
            raise StreamLost(f"no heartbeat from {self.base_url} for {STREAM_SILENCE_S:g} s") from None
        except httpx.TransportError as exc:
            raise StreamLost(f"the stream from {self.base_url} dropped ({type(exc).__name__})") from None
        raise StreamLost(f"{self.base_url} closed the stream")

    def _refusal(self, response: httpx.Response) -> DeviceChannelError:
        status = response.status_code
        if status == 401:
            if not self._auth:
                return DeviceChannelError(f"{self.base_url} requires a token (HTTP 401): pass --token JWT")
            return DeviceChannelError(
                f"{self.base_url} refused the token (HTTP 401): use a valid, unexpired JWT signed with the "
                "server's TRULOOP_JWT_SECRET"
            )
        if status == 404:
            return DeviceChannelError(f"no agent-rpc stream at {self.base_url}{STREAM_PATH} (HTTP 404): check --url")
        if status >= 500 or status == 429:
            return StreamLost(f"{self.base_url} is unavailable (HTTP {status})")
        return DeviceChannelError(f"{self.base_url} refused the stream (HTTP {status})")

    def _on_comment(self, text: str) -> None:
        if text == "connected":
            self.connections += 1
            self.connected.set()
            logger.info("connected to %s%s; waiting for calls", self.base_url, STREAM_PATH)
        else:
            logger.debug("stream comment: %s", text)

    async def _on_envelope(self, client: httpx.AsyncClient, raw: str) -> None:
        try:
            envelope = json.loads(raw)
            message = json.loads(envelope["data"])
        except (ValueError, TypeError, KeyError):
            logger.warning("ignored an agent-rpc event that is not an envelope holding JSON-RPC")
            return
        if not isinstance(message, dict):
            logger.warning("ignored an envelope whose data is not a JSON-RPC object")
            return
        self.envelopes.append(envelope)
        self.received.append(message)
        if "id" not in message:
            text = envelope.get("message") or json.dumps(message.get("params", {}), ensure_ascii=False)
            logger.info("notification %s: %s", message.get("method", "?"), text)
            return
        request_id = message["id"]
        if request_id in self._settled:
            logger.info("%s was delivered again; it is already answered", request_id)
            return
        body = self._replies.get(request_id)
        if body is None:
            params = json.dumps(message.get("params", {}), ensure_ascii=False)
            logger.info("request %s %s %s", request_id, message.get("method"), params)
            body = self._replies[request_id] = await self._response_to(message)
        await self._post(client, body)

    async def _response_to(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request.get("method"), request.get("params", {})
        if not isinstance(method, str) or not isinstance(params, dict):
            reply = error_reply(INVALID_REQUEST, "Invalid Request")
        else:
            answer = self.answers.get(method)
            if answer is None:
                reply = error_reply(METHOD_NOT_FOUND, "Method not found", {"method": method})
            else:
                given = answer(params) if callable(answer) else answer
                reply = await given if inspect.isawaitable(given) else given
                problem = _reply_problem(reply)
                if problem:
                    logger.warning("the answer for %s %s; answering Internal error instead", method, problem)
                    reply = error_reply(INTERNAL_ERROR, "Internal error")
        key = "error" if "error" in reply else "result"
        return {"jsonrpc": "2.0", "id": request["id"], key: reply[key]}

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> None:
        request_id = body["id"]
        try:
            response = await client.post(
                self.base_url + ANSWER_PATH, json=body, headers=self._auth, timeout=POST_TIMEOUT_S
            )
        except httpx.HTTPError as exc:
            logger.warning(
                "could not post the answer to %s (%s); it is posted when the call comes again",
                request_id,
                type(exc).__name__,
            )
            return
        try:
            reply = response.json()
        except ValueError:
            reply = None
        self.answered.append({"id": request_id, "response": body, "status": response.status_code, "reply": reply})
        if response.status_code >= 500:  # "retry shortly": keep the answer, post it again when the call comes back
            logger.warning("the server could not take the answer to %s (HTTP %d); it is posted again",
                           request_id, response.status_code)  # fmt: skip
            return
        self._replies.pop(request_id, None)
        self._settled[request_id] = None
        if len(self._settled) > REMEMBERED_IDS:
            self._settled.pop(next(iter(self._settled)))
        outcome = "error" if "error" in body else "result"
        if response.status_code == 200:
            logger.info("answered %s with a %s: accepted", request_id, outcome)
        else:
            refusal = reply.get("error", {}).get("message") if isinstance(reply, dict) else response.text[:200]
            logger.warning("the server refused the answer to %s: HTTP %d %s", request_id, response.status_code, refusal)


# -- command line ----------------------------------------------------------------------------


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}")
    return int(value)


class DeviceEnvironment(BaseSettings):
    """The simulator is its own program (it runs on the device's side, not the server's), so it reads its one
    variable itself: the token, which is better kept out of `ps` than passed as --token."""

    model_config = SettingsConfigDict(case_sensitive=True, env_ignore_empty=True, extra="ignore")

    token: SecretStr | None = Field(default=None, validation_alias=TOKEN_ENV)


def build_parser() -> argparse.ArgumentParser:
    p = _OneLineParser(prog=PROG, description="Simulate the user's phone on a truloop-mcp agent-rpc channel.")
    p.add_argument("--url", default="http://127.0.0.1:8000", help="the server's base URL (default %(default)s)")
    p.add_argument("--token", help=f"the user's JWT (omit for an unauthenticated loopback server) [{TOKEN_ENV}]")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--answers", type=Path, help="JSON file of canned replies by method (default: built in)")
    source.add_argument("--interactive", action="store_true", help="ask on stdin for dialogs and permissions")
    p.add_argument("--once", type=_positive, metavar="N", help="exit 0 after answering N requests")
    p.add_argument(
        "--reconnect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="reopen a lost stream with backoff (default on)",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="also log heartbeats")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.url.startswith(("http://", "https://")):
        sys.stderr.write(f"{PROG}: error: --url must start with http:// or https://\n")
        return 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    try:
        answers = (
            interactive_answers()
            if args.interactive
            else load_answers(args.answers)
            if args.answers
            else DEFAULT_ANSWERS
        )
    except DeviceChannelError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    from_environment = DeviceEnvironment().token
    token = args.token or (from_environment.get_secret_value() if from_environment else None)
    device = DeviceSimulator(args.url, token, answers)
    try:
        anyio.run(lambda: device.run(once=args.once, reconnect=args.reconnect))
    except KeyboardInterrupt:
        return 130
    except DeviceChannelError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
