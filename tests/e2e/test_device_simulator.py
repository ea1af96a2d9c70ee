"""The device simulator (`python -m bridge.device`) answering deferred tools of a real `truloop-mcp --transport http`
subprocess, called by an MCP client over streamable HTTP; plus the simulator's own stream handling on a fake server."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from bridge.device import DeviceChannelError, DeviceSimulator, StreamLost, interactive_answers, load_answers
from tests.support import (
    MODES,
    child_env,
    device_online,
    device_ready_http_server,
    error_of,
    eventually,
    mcp_client,
    token,
)

ROOT = Path(__file__).resolve().parents[2]
DAY = {"start_date": "2026-03-10T00:00:00+09:00", "end_date": "2026-03-11T00:00:00+09:00"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with device_ready_http_server(tmp_path_factory.mktemp("device-data")) as base:
        yield base


def new_user() -> str:
    return "user-" + secrets.token_hex(4)


# -- against the real server -----------------------------------------------------------------


@pytest.mark.anyio
@MODES
async def test_calendar_events_come_from_the_device(server: str, mode: str) -> None:
    user = new_user()
    with anyio.fail_after(15):
        async with device_online(server, user) as device, mcp_client(server, token(sub=user), mode) as client:
            result = await client.call_tool(
                "get_calendar_events", {"notification_message": "Reading your calendar", **DAY}
            )
    assert not result.is_error, result.content
    assert result.structured_content == {
        "events": [
            {
                "id": "sim-20260310-1",
                "title": "Team stand-up",
                "start": "2026-03-10T06:00:00+09:00",
                "end": "2026-03-10T07:00:00+09:00",
            },
            {
                "id": "sim-20260310-2",
                "title": "Lunch with Mina",
                "start": "2026-03-10T12:00:00+09:00",
                "end": "2026-03-10T13:00:00+09:00",
            },
        ]
    }
    (request,) = device.received
    assert request["method"] == "calendar.getEvents" and request["id"].startswith("call_")
    assert request["params"] == {"startDate": DAY["start_date"], "endDate": DAY["end_date"]}
    # the notification text travels beside the request, in the legacy envelope
    assert device.envelopes[0]["custom_type"] == "agent-rpc"
    assert device.envelopes[0]["message"] == "Reading your calendar"
    (answer,) = device.answered
    assert answer["status"] == 200
    assert answer["reply"] == {"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": True}}


@pytest.mark.anyio
async def test_dialog_and_permission_answers(server: str) -> None:
    user = new_user()
    with anyio.fail_after(15):
        async with device_online(server, user) as device, mcp_client(server, token(sub=user)) as client:
            confirmed = await client.call_tool(
                "confirm_interaction",
                {"notification_message": "Waiting for you", "title": "Book it?", "message": "Book the 7 pm table?"},
            )
            status = await client.call_tool(
                "get_permission_status", {"notification_message": "Checking", "permission": "calendar.read"}
            )
    assert confirmed.structured_content == {"confirmed": True}
    assert status.structured_content == {"status": "granted"}
    assert [r["method"] for r in device.received] == ["interaction.confirm", "permissions.getStatus"]
    assert device.received[0]["params"] == {"title": "Book it?", "message": "Book the 7 pm table?"}
    assert device.received[1]["params"] == {"permission": "calendar.read"}
    assert [a["status"] for a in device.answered] == [200, 200]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "code", "says"),
    [
        (
            {
                "error": {
                    "code": -32010,
                    "message": "PermissionRequired",
                    "data": {"requiredPermission": "calendar.read", "canPromptAgain": True},
                }
            },
            "permission_required",
            "'calendar.read' permission",
        ),
        ({"error": {"code": -32001, "message": "PermissionDenied"}}, "permission_denied", "Do not retry"),
        ({"error": {"code": -32002, "message": "UserCanceled"}}, "user_canceled", "canceled"),
        (None, "device_error", "Method not found"),
    ],
    ids=["-32010", "-32001", "-32002", "method-missing"],
)
async def test_device_errors_become_tool_errors(
    server: str, tmp_path: Path, reply: dict[str, Any] | None, code: str, says: str
) -> None:
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps({"calendar.getEvents": reply} if reply else {}))
    user = new_user()
    with anyio.fail_after(15):
        async with (
            device_online(server, user, load_answers(answers_file)) as device,
            mcp_client(server, token(sub=user)) as client,
        ):
            result = await client.call_tool("get_calendar_events", {"notification_message": "Calendar", **DAY})
    assert result.is_error
    assert result.is_error and error_of(result)["code"] == code
    assert says in result.content[0].text  # type: ignore[union-attr]
    assert device.answered[0]["status"] == 200 and "error" in device.answered[0]["response"]


@pytest.mark.anyio
async def test_a_device_of_another_user_gets_nothing(server: str) -> None:
    with anyio.fail_after(15):
        async with (
            device_online(server, new_user()) as stranger,
            device_online(server, (owner := new_user())) as device,
            mcp_client(server, token(sub=owner)) as client,
        ):
            result = await client.call_tool(
                "confirm_interaction", {"notification_message": "?", "title": "T", "message": "M"}
            )
    assert result.structured_content == {"confirmed": True}
    assert len(device.received) == 1 and stranger.received == []


@pytest.mark.anyio
async def test_relayed_messages_reach_the_device_and_are_not_answered(server: str) -> None:
    sender, recipient = new_user(), new_user()
    with anyio.fail_after(15):
        async with mcp_client(server, token(sub=recipient)) as client:  # enters the user directory
            await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
        async with device_online(server, recipient) as device, mcp_client(server, token(sub=sender)) as client:
            sent = await client.call_tool("send_message_to_user", {"recipient": recipient, "message": "Dinner at 7?"})
            await eventually(lambda: bool(device.received))  # the tool returns once queued; the stream may lag
    assert sent.structured_content is not None and sent.structured_content["delivered_to_device"] is True
    (notification,) = device.received
    assert notification["method"] == "relay.message" and "id" not in notification
    assert "Dinner at 7?" in device.envelopes[0]["message"]
    assert device.answered == []


def start_cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bridge.device", *args],
        cwd=ROOT,
        env=child_env(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.anyio
async def test_cli_answers_once_from_a_file_and_exits_0(server: str, tmp_path: Path) -> None:
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps({"permissions.getStatus": {"result": {"status": "notDetermined"}}}))
    user = new_user()
    proc = start_cli("--url", server, "--token", token(sub=user), "--answers", str(answers_file), "--once", "1")
    try:
        with anyio.fail_after(15):
            assert proc.stdout is not None
            line = await anyio.to_thread.run_sync(proc.stdout.readline)
            assert "connected" in line, line + (proc.stderr.read() if proc.stderr else "")
            async with mcp_client(server, token(sub=user)) as client:
                result = await client.call_tool(
                    "get_permission_status", {"notification_message": "Checking", "permission": "location"}
                )
            code = await anyio.to_thread.run_sync(proc.wait)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert result.structured_content == {"status": "notDetermined"}
    assert code == 0
    assert "accepted" in proc.stdout.read()


def cli_failure(*args: str) -> tuple[int, str]:
    proc = start_cli(*args)
    _, err = proc.communicate(timeout=15)
    return proc.returncode, err


def test_cli_exits_with_one_line_on_a_bad_token(server: str) -> None:
    bad = token(secret="another-secret-that-is-long-enough-32b")
    code, err = cli_failure("--url", server, "--token", bad)  # a 401 is never retried
    assert code == 1 and err.count("\n") == 1 and "HTTP 401" in err and bad not in err
    code, err = cli_failure("--url", server)
    assert code == 1 and err.count("\n") == 1 and "requires a token" in err


def test_cli_exits_with_one_line_when_nothing_listens() -> None:
    with socket.socket() as bound:  # bound but never listening: the port stays ours and connecting is refused
        bound.bind(("127.0.0.1", 0))
        code, err = cli_failure("--url", f"http://127.0.0.1:{bound.getsockname()[1]}", "--no-reconnect")
    assert code == 1 and err.count("\n") == 1 and "cannot connect" in err


def test_cli_rejects_a_bad_answers_file(tmp_path: Path) -> None:
    bad = tmp_path / "answers.json"
    bad.write_text(json.dumps({"interaction.confirm": {"confirmed": True}}))
    code, err = cli_failure("--answers", str(bad))
    assert code == 2 and "'interaction.confirm'" in err and err.count("\n") == 1


# -- the stream handling, on a fake server ---------------------------------------------------


def envelope_event(message: dict[str, Any], text: str = "") -> bytes:
    envelope = {"custom_type": "agent-rpc", "message": text, "data": json.dumps(message)}
    return f"event: agent-rpc\ndata: {json.dumps(envelope)}\n\n".encode()


def request(call_id: str, method: str = "interaction.confirm") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "method": method, "params": {"title": "T", "message": "M"}}


RELAY = {"jsonrpc": "2.0", "method": "relay.message", "params": {"from": "bob", "text": "Dinner at 7?"}}


class FakeServer:
    """Serves scripted SSE streams (one per GET; a status int refuses that connection) and records POSTs."""

    def __init__(self, *streams: list[bytes] | int, post: Callable[[httpx.Request], httpx.Response] | None = None):
        self.streams = list(streams)
        self.gets = 0
        self.posts: list[dict[str, Any]] = []
        self.post = post or (
            lambda r: httpx.Response(
                200, json={"jsonrpc": "2.0", "id": json.loads(r.content)["id"], "result": {"accepted": True}}
            )
        )

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            assert request.url.path == "/api/v1/agent/tool-message"
            assert request.headers["Authorization"] == "Bearer device-jwt"
            self.posts.append(json.loads(request.content))
            return self.post(request)
        assert request.url.path == "/api/v1/agent/rpc-stream"
        self.gets += 1
        stream = self.streams.pop(0)
        if isinstance(stream, int):
            return httpx.Response(
                stream, json={"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "x"}}
            )

        async def chunks() -> AsyncIterator[bytes]:
            for chunk in stream:
                yield chunk

        return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=chunks())


def simulator(fake: FakeServer, answers: Any = None) -> DeviceSimulator:
    return DeviceSimulator(
        "http://device.test", "device-jwt", answers, transport=httpx.MockTransport(fake), initial_backoff=0.01
    )


@pytest.mark.anyio
async def test_requests_are_answered_once_and_notifications_never() -> None:
    stream = [
        b": connected\n\n",
        envelope_event(RELAY, "Dinner at 7?"),
        envelope_event(request("call_a")),
        b": heartbeat\n\n",
        envelope_event(request("call_a")),
        envelope_event(request("call_b")),
    ]
    fake = FakeServer(stream)
    device = simulator(fake)
    with anyio.fail_after(5):
        await device.run(once=2, reconnect=False)
    assert [m.get("id") for m in device.received] == [None, "call_a", "call_a", "call_b"]
    assert fake.posts == [
        {"jsonrpc": "2.0", "id": "call_a", "result": {"confirmed": True}},
        {"jsonrpc": "2.0", "id": "call_b", "result": {"confirmed": True}},
    ]
    assert [(a["id"], a["status"]) for a in device.answered] == [("call_a", 200), ("call_b", 200)]


@pytest.mark.anyio
async def test_unknown_methods_and_broken_replies_get_json_rpc_errors() -> None:
    stream = [
        b": connected\n\n",
        envelope_event(request("call_x", "camera.takePhoto")),
        envelope_event(request("call_y", "permissions.getStatus")),
    ]
    fake = FakeServer(stream)
    broken = {"permissions.getStatus": lambda params: {"status": "granted"}}  # neither result nor error
    with anyio.fail_after(5):
        await simulator(fake, broken).run(once=2, reconnect=False)
    assert [(p["id"], p["error"]["code"], p["error"]["message"]) for p in fake.posts] == [
        ("call_x", -32601, "Method not found"),
        ("call_y", -32603, "Internal error"),
    ]


@pytest.mark.anyio
async def test_a_failed_post_is_resent_on_redelivery_without_asking_again() -> None:
    outcomes: list[Any] = [httpx.ConnectError("refused"), None]
    asked: list[dict[str, Any]] = []

    def post(r: httpx.Request) -> httpx.Response:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": "call_a", "result": {"accepted": True}})

    def ask(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"result": {"confirmed": False}}

    fake = FakeServer(
        [b": connected\n\n", envelope_event(request("call_a"))],
        [b": connected\n\n", envelope_event(request("call_a"))],
        post=post,
    )
    device = simulator(fake, {"interaction.confirm": ask})
    with anyio.fail_after(5):
        await device.run(once=1, reconnect=True)
    assert len(asked) == 1 and fake.gets == 2
    assert fake.posts == [{"jsonrpc": "2.0", "id": "call_a", "result": {"confirmed": False}}] * 2
    assert [(a["id"], a["status"]) for a in device.answered] == [("call_a", 200)]


@pytest.mark.anyio
async def test_reconnects_after_an_outage_and_a_drop() -> None:
    fake = FakeServer(503, [b": connected\n\n"], [b": connected\n\n", envelope_event(request("call_a"))])
    device = simulator(fake)
    with anyio.fail_after(5):
        await device.run(once=1)
    assert fake.gets == 3 and device.connections == 2 and len(device.answered) == 1


@pytest.mark.anyio
async def test_without_reconnect_a_drop_or_a_bad_token_ends_the_run() -> None:
    with pytest.raises(StreamLost, match="closed the stream"):
        await simulator(FakeServer([b": connected\n\n"])).run(reconnect=False)
    with pytest.raises(StreamLost, match="HTTP 503"):
        await simulator(FakeServer(503)).run(reconnect=False)
    refused = FakeServer(401)
    with pytest.raises(DeviceChannelError, match="refused the token") as caught:
        await simulator(refused).run(reconnect=True)  # a bad token is not retried
    assert not isinstance(caught.value, StreamLost) and refused.gets == 1


@pytest.mark.anyio
async def test_the_simulator_stops_cleanly_when_cancelled() -> None:
    never_ending = anyio.Event()

    async def forever(request: httpx.Request) -> httpx.Response:
        async def chunks() -> AsyncIterator[bytes]:
            yield b": connected\n\n"
            await never_ending.wait()
            yield b""

        return httpx.Response(200, content=chunks())

    device = DeviceSimulator("http://device.test", None, transport=httpx.MockTransport(forever))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(device.run)
            await device.connected.wait()
            tg.cancel_scope.cancel()
    assert device.connections == 1 and device.answered == []


@pytest.mark.anyio
async def test_interactive_answers() -> None:
    typed = iter(["y", "n", "c", "2", "nonsense"])
    answers = interactive_answers(ask=lambda prompt: next(typed))
    dialog = {"title": "Book it?", "message": "7 pm"}
    confirm, permission = answers["interaction.confirm"], answers["permissions.getStatus"]
    assert callable(confirm) and callable(permission)
    assert await confirm(dialog) == {"result": {"confirmed": True}}  # type: ignore[misc]
    assert await confirm(dialog) == {"result": {"confirmed": False}}  # type: ignore[misc]
    assert (await confirm(dialog))["error"]["code"] == -32002  # type: ignore[misc]
    assert await permission({"permission": "location"}) == {"result": {"status": "denied"}}  # type: ignore[misc]
    assert await permission({"permission": "location"}) == {"result": {"status": "granted"}}  # type: ignore[misc]


def test_load_answers_checks_each_reply(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"permissions.getStatus": {"error": {"code": -32001, "message": "PermissionDenied"}}}))
    assert load_answers(good)["permissions.getStatus"]["error"]["code"] == -32001
    for content, problem in [
        ("[]", "JSON object"),
        ("{", "not valid JSON"),
        ('{"m": {"result": 1, "error": {}}}', "must be"),
        ('{"m": {"error": {"code": "x", "message": "y"}}}', "integer"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        with pytest.raises(DeviceChannelError, match=problem):
            load_answers(bad)
    with pytest.raises(DeviceChannelError, match="cannot read"):
        load_answers(tmp_path / "missing.json")
