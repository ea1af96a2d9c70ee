"""Code mode (`--code-mode`, docs/code-mode.md), driven through the installed server over stdio and HTTP with the real
`bwrap`: a program composes tools and every inner call is an audit line naming it; a destructive call inside a
program asks the person and a refusal is raised inside it; a program sees neither the data folder nor the server's
port and does not run as root; a busy loop is stopped at its `timeout_s` while the server keeps answering; a loop
of calls stops at the bound; a guest's program reaches guest tools only; `--exposure code` lists little."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support import (
    SECRET,
    TRULOOP,
    answering,
    child_env,
    error_of,
    eventually,
    http_server_process,
    mcp_client,
    token,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DATA_MARK = "code-mode-data-marker-5e21"
CHILD_MARK = "Code mode's interpreter"  # in the cmdline of every program's interpreter (child.py's docstring)


@dataclass
class Served:
    client: Client
    data: Path
    port: int | None  # the HTTP server's own port


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, transport: str, *flags: str, role: str = "member", **client_options: Any
) -> AsyncIterator[Served]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "marker.txt").write_text(DATA_MARK)
    args = ["--code-mode", "--demo", "--data-dir", str(data), *flags]
    if transport == "stdio":
        params = StdioServerParameters(command=TRULOOP, args=args, env=child_env())
        async with Client(params, mode="legacy", **client_options) as client:
            yield Served(client, data, None)
        return
    with http_server_process(*args, env=child_env(TRULOOP_JWT_SECRET=SECRET)) as (base, _, _):
        async with mcp_client(base, token("alice", role=role), mode="legacy", **client_options) as client:
            yield Served(client, data, int(base.rsplit(":", 1)[1]))


async def program(client: Client, code: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("execute_code", {"code": code, **arguments})
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


def audit_lines(data: Path) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def program_calls(data: Path, program_id: str) -> list[dict[str, Any]]:
    return [line for line in audit_lines(data) if line.get("program") == program_id and line["event"] == "tool_call"]


COMPOSE = """
people = tools.search_users(query="Minji")["users"]
events = tools.get_events()["events"]
print("found", len(people), "people")
result = {"people": [p["id"] for p in people], "events": len(events)}
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_program_composes_tools_with_one_audit_line_per_inner_call(tmp_path: Path, transport: str) -> None:
    async with served(tmp_path, transport) as s:
        listed = {tool.name: tool for tool in (await s.client.list_tools()).tools}
        assert "tools.search_users" in (listed["execute_code"].description or "").replace("NAME", "search_users")
        outcome = await program(s.client, COMPOSE)
        direct = await s.client.call_tool("get_events", {})
        assert direct.structured_content is not None
        assert outcome["result"] == {"people": ["minji"], "events": len(direct.structured_content["events"])}
        assert outcome["output"] == "found 1 people\n" and outcome["calls"] == 2 and outcome["notes"] == []

        def both_audited() -> bool:
            return len(program_calls(s.data, outcome["program"])) == 2

        await eventually(both_audited)
        calls = program_calls(s.data, outcome["program"])
        assert [line["tool_name"] for line in calls] == ["search_users", "get_events"]
        assert all(line["nested"] and line["user_id"] == calls[0]["user_id"] for line in calls)
        results = [
            line
            for line in audit_lines(s.data)
            if line.get("program") == outcome["program"] and line["event"] == "tool_result"
        ]
        assert [line["status"] for line in results] == ["ok", "ok"]


CONFIRMED = """
saved = tools.save_memory(content="the code-mode confirmation probe")
try:
    tools.forget_memory(memory_id=saved["id"])
    result = {"forgotten": True}
except ToolCallError as refused:
    result = {"forgotten": False, "code": refused.code, "retryable": refused.retryable}
"""


@pytest.mark.timeout(60)
async def test_a_destructive_call_inside_a_program_asks_the_person_and_a_decline_is_raised_inside(
    tmp_path: Path,
) -> None:
    asked: list[str] = []
    async with served(tmp_path, "stdio", elicitation_callback=answering("decline", seen=asked)) as s:
        outcome = await program(s.client, CONFIRMED)
        assert outcome["result"] == {"forgotten": False, "code": "cancelled", "retryable": False}
        assert len(asked) == 1 and "the code-mode confirmation probe" in asked[0]
        found = await s.client.call_tool("search_memories", {"query": "confirmation probe"})
        assert found.structured_content is not None and found.structured_content["count"] == 1  # still there


CONTAINED = """
import os, socket
seen = {"uid": os.getuid(), "euid": os.geteuid()}
for path in [MARKER, DATA]:
    try:
        seen[path] = open(path).read() if path.endswith(".txt") else os.listdir(path)
    except OSError as exc:
        seen[path] = type(exc).__name__
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    seen["port"] = "reached"
except OSError as exc:
    seen["port"] = type(exc).__name__
seen["env"] = sorted(os.environ)
import time
time.sleep(1.5)  # while it sleeps, the test reads who owns it on the host
result = seen
"""


def interpreter_owners() -> list[int]:
    """The host uid of every program interpreter now running (warm ones included)."""
    owners = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if CHILD_MARK.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    status = Path(f"/proc/{entry}/status").read_text()
                    owners.append(int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1]))
    return owners


@pytest.mark.timeout(60)
async def test_a_program_sees_no_data_folder_no_server_port_and_is_not_root(tmp_path: Path) -> None:
    async with served(tmp_path, "http") as s:
        assert s.port is not None
        code = f"MARKER, DATA, PORT = {str(s.data / 'marker.txt')!r}, {str(s.data)!r}, {s.port}\n" + CONTAINED
        owners: list[int] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await eventually(lambda: bool(interpreter_owners()))
                await anyio.sleep(0.5)
                owners.extend(interpreter_owners())

            tg.start_soon(watch)
            outcome = await program(s.client, code)
        seen = outcome["result"]
        assert DATA_MARK not in json.dumps(seen)
        assert seen[str(s.data / "marker.txt")] in ("FileNotFoundError", "PermissionError")
        assert seen[str(s.data)] in ("FileNotFoundError", "PermissionError")
        assert seen["port"] != "reached"
        assert seen["uid"] != 0 and seen["euid"] != 0
        assert not any(name.startswith("TRULOOP") for name in seen["env"])
        assert owners and 0 not in owners  # on the host too: never root's, even when the server runs as root


@pytest.mark.timeout(60)
@pytest.mark.filterwarnings("ignore:ping is removed")  # the handshake era still has it (mode="legacy")
async def test_a_busy_loop_is_stopped_at_its_timeout_while_pings_keep_answering(tmp_path: Path) -> None:
    async with served(tmp_path, "stdio") as s:
        await program(s.client, "result = 1")  # warm
        pings: list[float] = []
        stopped: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                started = time.monotonic()
                result = await s.client.call_tool("execute_code", {"code": "while True: pass", "timeout_s": 3})
                stopped.append((time.monotonic() - started, result))
                tg.cancel_scope.cancel()

            tg.start_soon(run)
            while True:
                began = time.monotonic()
                await s.client.send_ping()
                pings.append(time.monotonic() - began)
                await anyio.sleep(0.1)
        ((took, result),) = stopped
        assert result.is_error and error_of(result)["code"] == "timeout", result.content
        assert 2.9 <= took < 5.0
        assert len(pings) >= 15 and max(pings) < 0.25, pings
        assert interpreter_owners().count(0) == 0
        assert (await program(s.client, "result = 2"))["result"] == 2  # the next program runs


@pytest.mark.timeout(60)
async def test_a_loop_of_500_calls_stops_at_the_bound(tmp_path: Path) -> None:
    async with served(tmp_path, "stdio") as s:
        code = "done = 0\nfor i in range(500):\n    tools.get_current_datetime()\n    done += 1\n"
        result = await s.client.call_tool("execute_code", {"code": code})
        assert result.is_error
        error = error_of(result)
        text = result.content[0].text  # type: ignore[union-attr]
        assert "rate_limited" in text and "at most 50 tool calls" in text, text
        program_id = text.rsplit("program ", 1)[1].rstrip(")")

        def all_audited() -> bool:
            return len(program_calls(s.data, program_id)) >= 50

        await eventually(all_audited)
        await anyio.sleep(0.3)
        assert len(program_calls(s.data, program_id)) == 50, error


GUEST = """
reached = {}
for name in ("search_users", "get_events", "list_invited_events"):
    try:
        getattr(tools, name)()
        reached[name] = "ok"
    except ToolCallError as refused:
        reached[name] = refused.code
result = reached
"""


@pytest.mark.timeout(90)
async def test_a_guests_program_reaches_guest_tools_only(tmp_path: Path) -> None:
    async with served(tmp_path, "http", role="guest") as s:
        names = {tool.name for tool in (await s.client.list_tools()).tools}
        assert "execute_code" not in names  # not without --code-mode-guests
    async with served(tmp_path, "http", "--code-mode-guests", role="guest") as s:
        names = {tool.name for tool in (await s.client.list_tools()).tools}
        assert "execute_code" in names and "search_users" not in names
        outcome = await program(s.client, GUEST)
        assert outcome["result"] == {
            "search_users": "unknown_tool",
            "get_events": "unknown_tool",
            "list_invited_events": "ok",
        }


@pytest.mark.timeout(60)
async def test_exposure_code_lists_the_discovery_tools_and_execute_code(tmp_path: Path) -> None:
    async with served(tmp_path, "stdio", "--exposure", "code") as s:
        names = sorted(tool.name for tool in (await s.client.list_tools()).tools)
        assert names == ["execute_code", "list_toolsets", "load_toolset", "search_tools"]
        outcome = await program(s.client, COMPOSE)  # the tools not listed are there to program with
        assert outcome["result"]["people"] == ["minji"]
