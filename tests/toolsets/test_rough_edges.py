"""Rough edges a newcomer met: each fixed, each pinned here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import Client
from pydantic import ValidationError

from server import __version__
from tests.support import TRULOOP, child_env, error_of, server_for, services_for
from toolsets.assistant.demo import seed_demo
from toolsets.assistant.device_calendar import CalendarEntry


def test_version_flag() -> None:
    done = subprocess.run([TRULOOP, "--version"], capture_output=True, text=True, timeout=30, env=child_env())
    assert done.returncode == 0 and done.stdout.strip() == f"truloop-mcp {__version__}"


def test_the_license_is_shipped() -> None:
    root = Path(__file__).resolve().parents[2]
    assert "Apache License" in (root / "LICENSE").read_text() and "Version 2.0" in (root / "LICENSE").read_text()
    assert 'license = "Apache-2.0"' in (root / "pyproject.toml").read_text()


def test_help_keeps_a_wildcard() -> None:
    done = subprocess.run([TRULOOP, "--help"], capture_output=True, text=True, timeout=30, env=child_env())
    assert "mcp.example.com:*" in " ".join(done.stdout.split())


@pytest.mark.parametrize("value", ["2026-03-10 10:00", "2026-03-10T10:00", "2026-03-10 10:00+09:00", "10 March"])
def test_a_device_time_needs_t_and_an_offset(value: str) -> None:
    with pytest.raises(ValidationError):
        CalendarEntry(id="1", start=value, end=value)


@pytest.mark.parametrize("value", ["2026-03-10", "2026-03-10T10:00:00+09:00", "2026-03-10T01:00:00Z"])
def test_a_date_alone_or_a_full_date_time_is_valid(value: str) -> None:
    assert CalendarEntry(id="1", start=value, end=value).start == value


@pytest.mark.anyio
async def test_the_readme_example_finds_minji_on_the_demo(tmp_path: Path) -> None:
    services = services_for(tmp_path / "demo")
    assert await seed_demo(services, "me", "Asia/Seoul")
    async with Client(server_for(user="me", services=services)) as client:
        for query in ("민지", "Minji", "minji kim"):
            found = await client.call_tool("search_users", {"query": query})
            names = [user["display_name"] for user in found.structured_content["users"]]  # type: ignore[index]
            assert "김민지" in names, query


@pytest.mark.anyio
async def test_a_gate_says_what_to_call_first_and_that_the_call_will_then_run(tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text('[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n')
    async with Client(server_for(user="me", gates=gates, data_dir=tmp_path)) as client:
        refused = await client.call_tool("save_memory", {"content": "x"})
        text = refused.content[0].text  # type: ignore[union-attr]
        assert error_of(refused)["code"] == "precondition"
        assert "retried shortly" not in text
        assert "Call search_memories, then call save_memory again" in text


@pytest.mark.parametrize("prefix", ["", "/assistant"])
def test_the_agent_routes_answer_under_the_assistant_prefix_too(tmp_path: Path, prefix: str) -> None:
    import httpx

    from tests.support import device_ready_http_server, token

    with device_ready_http_server(tmp_path / "data") as base:
        answer = {"jsonrpc": "2.0", "id": "call_unknown", "result": {"confirmed": True}}
        headers = {"Authorization": f"Bearer {token('alice')}"}
        posted = httpx.post(f"{base}{prefix}/api/v1/agent/tool-message", json=answer, headers=headers, timeout=10)
        assert posted.status_code == 404 and posted.json()["jsonrpc"] == "2.0"  # the route's own refusal
        anonymous = httpx.post(f"{base}{prefix}/api/v1/agent/tool-message", json=answer, timeout=10)
        assert anonymous.status_code == 401


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_forgetting_a_memory_that_does_not_exist_asks_nobody(tmp_path: Path, mode: str) -> None:
    from tests.support import answering

    asked: list[str] = []
    server = server_for(user="me", services=services_for(tmp_path / "data"))
    async with Client(server, mode=mode, elicitation_callback=answering("accept", {"confirm": True}, asked)) as client:
        missing = await client.call_tool("forget_memory", {"memory_id": "mem_does_not_exist"})
        assert error_of(missing)["code"] == "not_found" and asked == []  # refused before the user was asked
        saved = await client.call_tool("save_memory", {"content": "a fact to forget"})
        memory_id = saved.structured_content["id"]  # type: ignore[index]
        forgotten = await client.call_tool("forget_memory", {"memory_id": memory_id})
        assert not forgotten.is_error and len(asked) == 1  # an existing one is still confirmed first
