"""The opt-in workspace toolset (`--workspace DIR`): files and a shell confined to one folder, every escape
refused, destructive tools confirmed, and published only where the issue allows (stdio; HTTP with
--workspace-http, to member tokens only; never guest or notification-safe)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from server.runtime.server_factory import build_server
from tests.support import SECRET, answering, child_env, error_of, mcp_client, settings, spawn_http_server, token

pytestmark = pytest.mark.anyio

WORKSPACE_TOOLS = {"list_files", "read_file", "write_file", "run_shell", "run_python"}


@pytest.fixture
def room(tmp_path: Path) -> Path:
    """The workspace, next to a folder outside it holding a secret (nothing may reach or change it)."""
    workspace = tmp_path / "room"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (workspace / "notes").mkdir()
    (workspace / "notes" / "todo.md").write_text("- write tests\n")
    (workspace / "escape").symlink_to(outside)  # a symlinked folder leading out
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")  # a symlinked file leading out
    (workspace / "inner.md").symlink_to(workspace / "notes" / "todo.md")  # a symlink that stays inside
    return workspace.resolve()


def outside_untouched(room: Path) -> bool:
    outside = room.parent / "outside"
    return sorted(os.listdir(outside)) == ["secret.txt"] and (outside / "secret.txt").read_text() == "top secret"


def client_for(room: Path, *, strict: bool = False, **options: Any) -> Client:
    server = build_server(settings(workspace=room, workspace_strict=strict, confirm="off"))
    return Client(server, mode=options.pop("mode", "legacy"), **options)


async def test_files_are_listed_read_and_written_inside_the_workspace(room: Path) -> None:
    async with client_for(room) as client:
        listed = (await client.call_tool("list_files", {})).structured_content
        assert listed is not None
        kinds = {entry["path"]: entry["type"] for entry in listed["entries"]}
        assert kinds["notes"] == "dir" and kinds["escape"] == "symlink"
        deep = (await client.call_tool("list_files", {"path": "notes", "recursive": True})).structured_content
        assert deep is not None and [e["path"] for e in deep["entries"]] == ["notes/todo.md"]
        read = (await client.call_tool("read_file", {"path": "notes/todo.md"})).structured_content
        assert read is not None and read["content"] == "- write tests\n"
        inner = (await client.call_tool("read_file", {"path": "inner.md"})).structured_content
        assert inner is not None and inner["content"] == "- write tests\n"  # a symlink that stays inside is fine
        written = await client.call_tool("write_file", {"path": "new/deeper/file.txt", "content": "안녕"})
        assert written.structured_content == {"path": "new/deeper/file.txt", "bytes_written": 6, "created": True}
        assert (room / "new" / "deeper" / "file.txt").read_text() == "안녕"
        await client.call_tool("write_file", {"path": "new/deeper/file.txt", "content": "!", "append": True})
        assert (room / "new" / "deeper" / "file.txt").read_text() == "안녕!"
        missing = error_of(await client.call_tool("read_file", {"path": "nope.txt"}))
        assert missing["code"] == "not_found"


ESCAPES = [
    "../outside/secret.txt",
    "notes/../../outside/secret.txt",
    "/etc/passwd",
    str(Path("/tmp")),
    "~/secret.txt",
    "escape/secret.txt",  # through a symlinked folder
    "leak.txt",  # a symlinked file
    "escape",
]


@pytest.mark.parametrize("strict", [False, True])
async def test_every_escape_is_refused_and_nothing_is_written_outside(room: Path, strict: bool) -> None:
    async with client_for(room, strict=strict) as client:
        for path in ESCAPES:
            for tool, arguments in (
                ("read_file", {"path": path}),
                ("write_file", {"path": path, "content": "pwned"}),
                ("write_file", {"path": f"{path}/x.txt", "content": "pwned"}),
                ("list_files", {"path": path}),
            ):
                error = error_of(await client.call_tool(tool, arguments))
                assert error["code"] in ("forbidden", "validation"), (tool, path, error)
                assert "top secret" not in error["reason"]
    assert outside_untouched(room)
    assert not (room.parent / "x.txt").exists()


async def test_strict_mode_refuses_every_dot_dot(room: Path) -> None:
    async with client_for(room) as lenient:
        inside = await lenient.call_tool("read_file", {"path": "notes/../notes/todo.md"})
        assert not inside.is_error  # `..` that stays inside is fine unless strict
    async with client_for(room, strict=True) as strict:
        error = error_of(await strict.call_tool("read_file", {"path": "notes/../notes/todo.md"}))
        assert error["code"] == "forbidden" and "strict" in error["reason"]


async def test_run_shell_runs_in_the_workspace_with_a_clean_environment(
    room: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", SECRET)
    async with client_for(room) as client:
        result = (await client.call_tool("run_shell", {"command": "pwd; ls notes; env"})).structured_content
        assert result is not None and result["exit_code"] == 0 and not result["timed_out"]
        lines = result["stdout"].splitlines()
        assert lines[0] == "/workspace" and lines[1] == "todo.md"  # the sandbox mounts the folder at /workspace
        assert SECRET not in result["stdout"] and "TRULOOP" not in result["stdout"]
        failing = (await client.call_tool("run_shell", {"command": "ls nope"})).structured_content
        assert failing is not None and failing["exit_code"] != 0 and "nope" in failing["stderr"]


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf notes",
        "rm -r -f notes",
        "rm -fR notes",
        "sudo ls",
        "ls && shutdown -h now",
        "echo x | su root",
        "reboot",
    ],
)
async def test_run_shell_refuses_the_deny_list(room: Path, command: str) -> None:
    async with client_for(room) as client:
        error = error_of(await client.call_tool("run_shell", {"command": command}))
        assert error["code"] == "forbidden" and "refuses" in error["reason"]
    assert (room / "notes" / "todo.md").exists()


async def test_run_shell_has_a_time_limit_and_an_output_cap(room: Path) -> None:
    async with client_for(room) as client:
        slow = (await client.call_tool("run_shell", {"command": "sleep 5", "timeout_s": 0.5})).structured_content
        assert slow is not None and slow["timed_out"] is True and slow["exit_code"] is None
        loud = (
            await client.call_tool("run_shell", {"command": "head -c 1000000 /dev/zero | tr '\\0' a"})
        ).structured_content
        assert loud is not None and loud["truncated"] is True and len(loud["stdout"]) == 64 * 1024
        too_long = error_of(await client.call_tool("run_shell", {"command": "ls", "timeout_s": 121}))
        assert too_long["code"] == "validation"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls; cat /etc/passwd", "metacharacters"),
        ("cat notes/todo.md | wc -l", "metacharacters"),
        ("echo $HOME", "metacharacters"),
        ("echo pwned > ../outside/x", "metacharacters"),
        ("cat ../outside/secret.txt", "'..'"),
        ("cat /etc/passwd", "absolute"),
        ("cat leak.txt", "outside the workspace"),
        ("ls escape", "outside the workspace"),
    ],
)
async def test_strict_run_shell_refuses_escapes_and_metacharacters(room: Path, command: str, reason: str) -> None:
    async with client_for(room, strict=True) as client:
        error = error_of(await client.call_tool("run_shell", {"command": command}))
        assert error["code"] == "forbidden" and reason in error["reason"], error
    assert outside_untouched(room)


async def test_strict_run_shell_runs_a_plain_command_without_a_shell(room: Path) -> None:
    async with client_for(room, strict=True) as client:
        result = (await client.call_tool("run_shell", {"command": "cat notes/todo.md"})).structured_content
        assert result is not None and result["stdout"] == "- write tests\n"


async def test_write_file_and_run_shell_are_destructive_and_confirmed(room: Path) -> None:
    server = build_server(settings(workspace=room))  # --confirm auto: asked when the client can be asked
    async with Client(server, mode="legacy", elicitation_callback=answering("decline")) as client:
        hints = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
        assert hints["write_file"].destructive_hint and hints["run_shell"].destructive_hint  # type: ignore[union-attr]
        assert hints["run_python"].destructive_hint  # type: ignore[union-attr]
        assert hints["read_file"].read_only_hint and hints["list_files"].read_only_hint  # type: ignore[union-attr]
        refused = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        assert error_of(refused)["code"] == "cancelled" and not (room / "a.txt").exists()
        shell = await client.call_tool("run_shell", {"command": "touch b.txt"})
        assert error_of(shell)["code"] == "cancelled" and not (room / "b.txt").exists()
        python = await client.call_tool("run_python", {"code": "open('c.txt', 'w').write('x')"})
        assert error_of(python)["code"] == "cancelled" and not (room / "c.txt").exists()


async def test_published_on_stdio_never_to_guests_or_notification_safe(room: Path) -> None:
    def profiles(**overrides: Any) -> Any:
        return build_server(settings(**overrides)).deployment.profiles

    stdio = profiles(workspace=room)
    assert set(stdio["member"].names()) >= WORKSPACE_TOOLS
    assert not WORKSPACE_TOOLS & set(stdio["guest"].names())
    assert not WORKSPACE_TOOLS & set(stdio["notification-safe"].names())
    http = profiles(workspace=room, transport="http")  # HTTP without --workspace-http: not at all
    assert not WORKSPACE_TOOLS & set(http["member"].names())
    assert set(profiles(workspace=room, transport="http", workspace_http=True)["member"].names()) >= WORKSPACE_TOOLS
    assert not WORKSPACE_TOOLS & set(profiles()["member"].names())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_over_http_only_with_workspace_http_and_only_to_member_tokens(room: Path, mode: str) -> None:
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--workspace", str(room), env=env) as base:
        async with mcp_client(base, token(), mode) as member:
            assert not WORKSPACE_TOOLS & {tool.name for tool in (await member.list_tools()).tools}
            assert error_of(await member.call_tool("read_file", {"path": "notes/todo.md"}))["code"] == "unknown_tool"
    with spawn_http_server("--workspace", str(room), "--workspace-http", env=env) as base:
        async with mcp_client(base, token(), mode) as member:
            assert {tool.name for tool in (await member.list_tools()).tools} >= WORKSPACE_TOOLS
            read = await member.call_tool("read_file", {"path": "notes/todo.md"})
            assert read.structured_content is not None and read.structured_content["content"] == "- write tests\n"
        async with mcp_client(base, token("g", role="guest"), mode) as guest:
            assert not WORKSPACE_TOOLS & {tool.name for tool in (await guest.list_tools()).tools}
            assert error_of(await guest.call_tool("read_file", {"path": "notes/todo.md"}))["code"] == "unknown_tool"
