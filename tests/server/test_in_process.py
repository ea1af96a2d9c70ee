"""In-process use from the same settings as the server: `server.runtime.in_process.in_process()` reads the environment
(`TRULOOP_GATES`, `TRULOOP_TOOLS_DIR`, `TRULOOP_AUDIT_LOG`, ...) as `truloop-mcp` does, and its interop runner and
LangChain tools keep every guarantee a server with those settings keeps: the configured gate refuses, then opens;
the plugin tool is listed and callable; each call writes its call and result lines to the audit log."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from server.runtime.in_process import in_process
from tests.plugin_files import plugin_source

pytestmark = pytest.mark.anyio

GATES = 'builtin = true\n\n[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n'
OUTPUT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
PLUGIN = 'def run(input_data, context):\n    return {"v": "from the tools folder"}\n'


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Only the environment says how this deployment is set up, as it would for a server."""
    for name in list(os.environ):
        if name.startswith("TRULOOP_") or name in ("DATABASE_URL", "REDIS_URL"):
            monkeypatch.delenv(name)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lookup.py").write_text(plugin_source("lookup", PLUGIN, output_schema=OUTPUT))
    (tmp_path / "gates.toml").write_text(GATES)
    monkeypatch.setenv("TRULOOP_USER", "alice")
    monkeypatch.setenv("TRULOOP_TIMEZONE", "Asia/Seoul")
    monkeypatch.setenv("TRULOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRULOOP_GATES", str(tmp_path / "gates.toml"))
    monkeypatch.setenv("TRULOOP_TOOLS_DIR", str(tools))
    monkeypatch.setenv("TRULOOP_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    return tmp_path


def audit_lines(root: Path, transport: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (root / "audit.jsonl").read_text().splitlines()]
    return [line for line in lines if line.get("transport") == transport]


def call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"call_{n}", "name": name, "args": args}


async def test_the_runner_keeps_the_configured_gate_plugins_and_audit(configured: Path) -> None:
    async with in_process() as app:
        runner = app.runner()
        assert app.caller.user_id == "alice"
        assert "lookup" in {tool.name for tool in runner.toolset}
        refused = await runner.reply(call("save_memory", {"content": "before searching"}, 1))
        assert refused["status"] == "error" and refused["artifact"]["code"] == "precondition"
        assert (await runner.reply(call("search_memories", {"query": "anything"}, 2)))["status"] == "success"
        opened = await runner.reply(call("save_memory", {"content": "after searching"}, 3))
        assert opened["status"] == "success"
        plugin = await runner.reply(call("lookup", {}, 4))
        assert plugin["status"] == "success" and plugin["artifact"] == {"v": "from the tools folder"}
    lines = audit_lines(configured, "in-process")
    for tool in ("search_memories", "lookup"):
        events = [line["event"] for line in lines if line["tool_name"] == tool]
        assert events == ["tool_call", "tool_result"], (tool, events)
    saves = [line for line in lines if line["tool_name"] == "save_memory" and line["event"] == "tool_result"]
    assert [line["status"] for line in saves] == ["error", "ok"]


async def test_langchain_tools_from_the_same_settings(configured: Path) -> None:
    pytest.importorskip("langchain_core")
    async with in_process() as app:
        tools = {tool.name: tool for tool in app.langchain_tools()}
        assert "lookup" in tools
        first = await tools["save_memory"].ainvoke(call("save_memory", {"content": "too early"}, 1))
        assert first.status == "error" and first.artifact["code"] == "precondition"
        await tools["search_memories"].ainvoke(call("search_memories", {"query": "x"}, 2))
        assert (await tools["save_memory"].ainvoke(call("save_memory", {"content": "now"}, 3))).status == "success"
        looked = await tools["lookup"].ainvoke(call("lookup", {}, 4))
        assert looked.status == "success" and looked.artifact == {"v": "from the tools folder"}
    results = [line for line in audit_lines(configured, "langgraph") if line["event"] == "tool_result"]
    assert {line["tool_name"] for line in results} == {"save_memory", "search_memories", "lookup"}
    assert len([line for line in audit_lines(configured, "langgraph") if line["event"] == "tool_call"]) == 4


async def test_keywords_override_the_environment(configured: Path, tmp_path: Path) -> None:
    async with in_process(user="bob", profile="guest") as app:
        assert app.caller.user_id == "bob" and app.profile == "guest"
        assert "save_memory" not in {tool.name for tool in app.runner().toolset}
