"""Every guarantee on every front: MCP over stdio, MCP over HTTP, the in-process interop runner, the pipe of
`truloop-mcp call`, and the LangGraph tools run the same matrix on one deployment's settings (a gates file, a
tools folder with a plugin and its canary candidate, an audit log):

- the tool list is the same set (plugins included, no loaders in `full` exposure);
- a gate refuses `save_memory` until `search_memories` succeeded in that conversation, then opens;
- a destructive tool (`forget_memory`) is confirmed, declined and cancelled the front's own way (MCP:
  elicitation; LangGraph: interrupt/resume; in-process: the runner's confirmer); a pipe cannot ask, so it is
  cancelled unless `--confirm auto` is given;
- the plugin tool is callable, and the canary routes it by the same key (the user) on every front;
- the audit log has a call and a result line for every call, with the front's transport.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.plugin_files import plugin_source
from tests.support import TRULOOP, child_env, spawn_http_server
from toolsets.core.context import Caller, ConfirmRequest, Decision

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

GATES = 'builtin = true\n\n[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n'
OUTPUT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
STABLE = 'def run(input_data, context):\n    return {"v": "stable"}\n'
CANDIDATE = 'def run(input_data, context):\n    return {"v": "candidate"}\n'
ANSWERS = ("accept", "decline", "cancel")

Outcome = tuple[str, str | None, dict[str, Any]]  # status (ok | error | cancelled), error code, data


@dataclass
class Deployed:
    """One deployment's folders, shared by every front (one store, one tools folder, one audit log)."""

    root: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def audit(self) -> Path:
        return self.root / "audit.jsonl"

    def flags(self) -> list[str]:
        return [
            "--user", "alice", "--timezone", "Asia/Seoul", "--data-dir", str(self.data),
            "--tools-dir", str(self.root / "tools"), "--gates", str(self.root / "gates.toml"),
            "--audit-log", str(self.audit), "--canary-key", "user",
        ]  # fmt: skip

    def audit_results(self, transport: str) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.audit.read_text().splitlines()] if self.audit.exists() else []
        return [
            line
            for line in lines
            if line.get("transport") == transport
            and line["event"] == "tool_result"
            and line["status"] != "input_required"
        ]  # a LangGraph interrupt ends one run of the call; its resumed run is the call's outcome


@pytest.fixture
def deployed(tmp_path: Path) -> Deployed:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lookup.py").write_text(plugin_source("lookup", STABLE, output_schema=OUTPUT))
    (tools / "lookup.canary.py").write_text(plugin_source("lookup", CANDIDATE, output_schema=OUTPUT))
    (tmp_path / "gates.toml").write_text(GATES)
    return Deployed(tmp_path)


@dataclass
class Observed:
    tools: set[str] = field(default_factory=set)
    gate: list[tuple[str, str | None]] = field(default_factory=list)
    confirm: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    plugin: str | None = None


Call = Callable[[str, dict[str, Any], str], Awaitable[Outcome]]  # name, arguments, the user's answer if asked


async def run_matrix(tools: set[str], call: Call, tag: str) -> Observed:
    seen = Observed(tools=tools)
    seen.gate.append((await call("save_memory", {"content": f"{tag} before"}, "accept"))[:2])
    seen.gate.append((await call("search_memories", {"query": tag}, "accept"))[:2])
    saved = [await call("save_memory", {"content": f"{tag} fact {n}"}, "accept") for n in range(3)]
    seen.gate.append(saved[0][:2])
    for answer, (_, _, data) in zip(ANSWERS, saved, strict=True):
        seen.confirm[answer] = (await call("forget_memory", {"memory_id": data["id"]}, answer))[:2]
    status, _, data = await call("lookup", {}, "accept")
    seen.plugin = data.get("v") if status == "ok" else status
    return seen


def expected(tools: set[str]) -> Observed:
    return Observed(
        tools=tools,
        gate=[("error", "precondition"), ("ok", None), ("ok", None)],
        confirm={"accept": ("ok", None), "decline": ("cancelled", "cancelled"), "cancel": ("cancelled", "cancelled")},
    )


# -- MCP (stdio and HTTP): the client answers the elicitation ------------------------------------------------


def mcp_outcome(result: types.CallToolResult) -> Outcome:
    if not result.is_error:
        return "ok", None, result.structured_content or {}
    envelope = (result.meta or {})["io.truloop/error"]
    return envelope["status"], envelope["code"], {}


@asynccontextmanager
async def mcp_front(client_for: Callable[[Any], Client]) -> AsyncIterator[tuple[set[str], Call]]:
    answer = {"action": "accept"}

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        accepted = answer["action"] == "accept"
        return types.ElicitResult(action=answer["action"], content={"confirm": True} if accepted else None)  # type: ignore[arg-type]

    async with client_for(elicit) as client:

        async def call(name: str, arguments: dict[str, Any], said: str) -> Outcome:
            answer["action"] = said
            return mcp_outcome(await client.call_tool(name, arguments))

        yield {tool.name for tool in (await client.list_tools()).tools}, call


async def observe_stdio(deployed: Deployed) -> Observed:
    params = StdioServerParameters(command=TRULOOP, args=deployed.flags(), env=child_env())

    def client_for(elicit: Any) -> Client:
        return Client(params, mode="legacy", elicitation_callback=elicit)

    async with mcp_front(client_for) as (tools, call):
        return await run_matrix(tools, call, "stdio")


async def observe_http(deployed: Deployed) -> Observed:
    with spawn_http_server(*deployed.flags(), env=child_env()) as base:

        def client_for(elicit: Any) -> Client:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(timeout=30)
            transport = streamable_http_client(f"{base}/mcp", http_client=http)
            return Client(transport, mode="legacy", elicitation_callback=elicit)  # type: ignore[arg-type]

        async with mcp_front(client_for) as (tools, call):
            return await run_matrix(tools, call, "http")


# -- in-process: the interop runner over the deployment's front door, and the LangGraph tools ---------------


def reply_outcome(reply: dict[str, Any]) -> Outcome:
    artifact = reply.get("artifact") or {}
    if reply["status"] == "success":
        return "ok", None, artifact
    return artifact.get("status", "error"), artifact.get("code"), {}


class ScriptedConfirmer:
    def __init__(self) -> None:
        self.answer = "accept"

    async def confirm(self, request: ConfirmRequest) -> Decision:
        return {"accept": Decision.ACCEPTED, "decline": Decision.DECLINED}.get(self.answer, Decision.CANCELLED)


@asynccontextmanager
async def opened(deployed: Deployed) -> AsyncIterator[Any]:
    """The documented in-process entry (`server.runtime.in_process`), on the same settings as every other front."""
    from server.runtime.in_process import in_process
    from server.settings import Settings

    flags = deployed.flags()
    given = dict(zip((f.lstrip("-").replace("-", "_") for f in flags[::2]), flags[1::2], strict=True))
    # the subprocess fronts run without the CI's shared services (child_env): so does this one
    async with in_process(Settings(**given, redis_url=None, database_url=None)) as app:
        yield app


async def observe_runner(deployed: Deployed) -> Observed:

    async with opened(deployed) as app:
        confirmer = ScriptedConfirmer()
        runner = app.runner(confirmer=confirmer)

        async def call(name: str, arguments: dict[str, Any], said: str) -> Outcome:
            confirmer.answer = said
            document = {"type": "tool_call", "id": f"call_{name}", "name": name, "args": arguments}
            return reply_outcome(await runner.reply(document))

        return await run_matrix({tool.name for tool in runner.toolset}, call, "runner")


async def observe_langgraph(deployed: Deployed) -> Observed:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from tests.toolsets.test_interop_langgraph import ScriptedModel, tool_node_graph

    async with opened(deployed) as app:
        tools = app.langchain_tools(caller=Caller("alice", timezone="Asia/Seoul"))
        thread = f"parity-{deployed.root.name}"  # one conversation: every call of this front in one graph thread
        turns = 0

        async def call(name: str, arguments: dict[str, Any], said: str) -> Outcome:
            nonlocal turns
            turns += 1
            model = ScriptedModel(
                script=[
                    AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": f"call_{turns}"}]),
                    AIMessage(content="Done."),
                ]
            )
            graph = tool_node_graph(model, tools, checkpointer=InMemorySaver())
            config = {"configurable": {"thread_id": thread}}
            state = await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
            if "__interrupt__" in state:
                (pending,) = state["__interrupt__"]
                assert pending.value["type"] == "confirmation" and pending.value["tool"] == name
                state = await graph.ainvoke(Command(resume={"action": said}), config)
            (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
            if message.status == "success":
                return "ok", None, message.artifact or {}
            return message.artifact.get("status", "error"), message.artifact.get("code"), {}

        return await run_matrix({tool.name for tool in tools}, call, "langgraph")


# -- the pipe: nobody to ask -----------------------------------------------------------------------------------


def pipe(deployed: Deployed, documents: list[dict[str, Any]], *flags: str) -> list[Any]:
    lines = "".join(json.dumps(d) + "\n" for d in documents).encode()
    done = subprocess.run(
        [TRULOOP, "call", *deployed.flags(), *flags], input=lines, capture_output=True, timeout=60, env=child_env()
    )
    assert done.returncode == 0, done.stderr.decode()
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    if "--list-tools" in flags:
        return [[(definition.get("function") or definition)["name"] for definition in replies[0]]]
    return [reply_outcome(reply) for reply in replies]


def one(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"call_{name}", "name": name, "args": arguments}


def observe_pipe(deployed: Deployed) -> Observed:
    seen = Observed()
    (listed,) = pipe(deployed, [], "--list-tools", "langchain")
    seen.tools = set(listed)
    first = pipe(
        deployed,
        [
            one("save_memory", {"content": "pipe before"}),
            one("search_memories", {"query": "pipe"}),
            *(one("save_memory", {"content": f"pipe fact {n}"}) for n in range(3)),
            one("lookup", {}),
        ],
    )
    seen.gate = [outcome[:2] for outcome in first[:3]]
    ids = [outcome[2]["id"] for outcome in first[2:5]]
    status, _, data = first[5]
    seen.plugin = data.get("v") if status == "ok" else status
    (approved,) = pipe(deployed, [one("forget_memory", {"memory_id": ids[0]})], "--confirm", "auto")
    (unasked,) = pipe(deployed, [one("forget_memory", {"memory_id": ids[1]})])
    seen.confirm = {"auto": approved[:2], "default": unasked[:2]}
    return seen


# -- the matrix ------------------------------------------------------------------------------------------------


async def test_every_front_keeps_every_guarantee(deployed: Deployed) -> None:
    stdio = await observe_stdio(deployed)
    reference = stdio.tools
    assert "lookup" in reference and not {"list_toolsets", "load_toolset"} & reference
    assert stdio.plugin in ("stable", "candidate")
    assert "get_calendar_events" not in reference  # only a device answers it, and none can reach stdio
    for name, seen in [
        ("stdio", stdio),
        ("http", await observe_http(deployed)),
        ("in-process", await observe_runner(deployed)),
        ("langgraph", await observe_langgraph(deployed)),
    ]:
        want = expected(reference if name == "stdio" else reference | {"get_calendar_events"})
        want.plugin = stdio.plugin  # the canary routes by the user, whatever the front
        assert seen == want, name
        results = deployed.audit_results(name if name != "in-process" else "in-process")
        assert len(results) == 9, (name, results)  # one tool_result line per call above
        assert {r["tool_name"] for r in results} == {"save_memory", "search_memories", "forget_memory", "lookup"}
        (plugin_line,) = [r for r in results if r["tool_name"] == "lookup"]
        assert plugin_line["route"] == ("canary" if stdio.plugin == "candidate" else "stable"), name

    piped = observe_pipe(deployed)
    assert piped.tools == reference | {"get_calendar_events"}  # the pipe may route it through --redis-url
    assert piped.gate == expected(reference).gate
    assert piped.plugin == stdio.plugin
    assert piped.confirm == {"auto": ("ok", None), "default": ("cancelled", "cancelled")}
    assert len(deployed.audit_results("cli")) == 8
