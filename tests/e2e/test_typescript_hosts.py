"""TypeScript-SDK hosts against the real stdio server.

Most MCP hosts (Claude Desktop, VS Code, Cursor, MCP Inspector) are built on the TypeScript SDK,
whose `Client.callTool` validates a result's `structuredContent` against the tool's `outputSchema`
once it has listed the tools, and throws `MCP error -32602` when it does not match. Error results
therefore carry no `structuredContent` (the envelope rides in `_meta`); these tests drive the
`truloop-mcp` console script with the SDK client (`tests/ts/client.mjs`) and with the MCP Inspector
CLI, and check that every result reaches the host as the server's text, without a client-side error.

The Node project in `tests/ts/` is installed with `npm ci` into `tests/ts/node_modules` (npm's cache
in `tests/ts/.npm-cache`; both gitignored) once, and reused while it matches the lockfile.
Without node/npm the tests fail under CI and skip elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRULOOP, child_env

pytestmark = pytest.mark.slow

TS_DIR = Path(__file__).resolve().parents[1] / "ts"
NODE_MODULES = TS_DIR / "node_modules"
NPM_CACHE = TS_DIR / ".npm-cache"
MARKER = NODE_MODULES / ".truloop-installed"
CLIENT = TS_DIR / "client.mjs"
ERROR_META_KEY = "io.truloop/error"
DAY = {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}
SCHEMA_MISMATCH = ("-32602", "does not match the tool's output schema")
RUN_TIMEOUT = 60.0


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        message = f"{program} is not on PATH (needed to run the TypeScript-SDK host tests)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def _node_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of every node/npm process: a throwaway HOME, npm's cache in the repo's ignored folder."""
    env = {k: v for k, v in child_env(**extra).items() if not k.lower().startswith("npm_config_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        npm_config_cache=str(NPM_CACHE),
        npm_config_update_notifier="false",
        npm_config_audit="false",
        npm_config_fund="false",
        NO_COLOR="1",
    )
    return env


def _fingerprint(node: str) -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((TS_DIR / name).read_bytes())
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    digest.update(version.strip().encode())
    return digest.hexdigest()


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    NPM_CACHE.mkdir(exist_ok=True)
    with (NPM_CACHE / ".truloop-install.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def node_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`npm ci` into tests/ts/node_modules unless it already matches the lockfile; yields a HOME for node."""
    node = _need("node")
    npm = _need("npm")
    _need("npx")
    home = tmp_path_factory.mktemp("node-home")
    wanted = _fingerprint(node)
    with _install_lock():
        if not (MARKER.is_file() and MARKER.read_text() == wanted):
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=TS_DIR,
                env=_node_env(home),
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
            MARKER.write_text(wanted)
    return home


def _server(data_dir: Path, *flags: str) -> list[str]:
    return [TRULOOP, "--data-dir", str(data_dir), *flags]


def _run(cmd: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=TS_DIR, env=_node_env(home), capture_output=True, text=True, timeout=RUN_TIMEOUT)


def _assert_no_schema_rejection(*outputs: str) -> None:
    for output in outputs:
        for needle in SCHEMA_MISMATCH:
            assert needle not in output, output


def _assert_error_result(result: dict[str, Any], code: str, status: str = "error") -> str:
    """An error as a host sees it: isError, the server's text, no structuredContent, the envelope in _meta."""
    assert result["isError"] is True, result
    assert result.get("structuredContent") is None, result
    envelope = (result.get("_meta") or {})[ERROR_META_KEY]
    assert envelope["status"] == status and envelope["code"] == code, envelope
    text = _text(result)
    assert text.strip(), result
    return text


def _text(result: dict[str, Any]) -> str:
    """The text a host shows: client.mjs joins it into "text"; the Inspector prints the raw `content`."""
    if "text" in result:
        return str(result["text"])
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def test_typescript_sdk_client_sees_every_result(node_home: Path, tmp_path: Path) -> None:
    node = _need("node")
    done = _run([node, str(CLIENT), *_server(tmp_path / "data")], node_home)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert done.returncode == 0, f"client failed:\n{done.stdout}\n{done.stderr}"
    assert not [line for line in lines if "exception" in line], done.stdout
    _assert_no_schema_rejection(done.stdout, done.stderr)

    steps = {line["step"]: line for line in lines}
    assert steps["initialize"]["protocolVersion"] == "2025-11-25", steps["initialize"]
    listed = steps["tools/list"]
    # Every tool publishes an outputSchema, so the SDK validates every call below.
    assert listed["count"] == listed["withOutputSchema"] > 0, listed
    assert {"get_day_of_week", "save_memory", "forget_memory"} <= set(listed["names"])

    calls = {line["label"]: line for line in lines if line["step"] == "call"}
    success = calls["success"]
    assert success["isError"] is False and success["structuredContent"] == DAY, success
    assert json.loads(success["text"]) == DAY

    text = _assert_error_result(calls["validation"], "validation")
    assert "YYYY-MM-DD" in text and "not-a-date" in text

    text = _assert_error_result(calls["unknown_tool"], "unknown_tool")
    assert "no_such_tool" in text and "get_day_of_week" in text

    assert calls["save"]["isError"] is False and calls["save"]["structuredContent"]["id"]
    asked = [line for line in lines if line["step"] == "elicitation"]
    assert len(asked) == 1 and "Forget the memory 'Prefers window seats on trains'" in asked[0]["message"], asked
    text = _assert_error_result(calls["declined"], "cancelled", status="cancelled")
    assert text.startswith("Cancelled"), text
    assert calls["still_there"]["structuredContent"]["count"] == 1  # declining changed nothing

    # 2026-07-28 cannot be offered by this SDK (it always initializes with its LATEST_PROTOCOL_VERSION).
    assert steps["era"]["skipped"] is True, steps["era"]


def test_typescript_sdk_client_lists_and_reads_resources_gets_prompts_and_completes(
    node_home: Path, tmp_path: Path
) -> None:
    """What hosts show besides tools, through the SDK client hosts use (on the demo data: its users and docs)."""
    node = _need("node")
    done = _run([node, str(CLIENT), *_server(tmp_path / "data", "--demo", "--user", "me")], node_home)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert done.returncode == 0, f"client failed:\n{done.stdout}\n{done.stderr}"
    assert not [line for line in lines if "exception" in line], done.stdout
    steps: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        steps.setdefault(line["step"], []).append(line)

    capabilities = steps["initialize"][0]["capabilities"]
    assert (
        capabilities["resources"]["subscribe"] is True and "completions" in capabilities and "prompts" in capabilities
    )
    (listed,) = steps["resources/list"]
    assert {"truloop://guide", "truloop://inbox", "truloop://events"} <= set(listed["uris"])
    assert (
        any(uri.startswith("truloop://docs/Team%20Handbook") for uri in listed["uris"]) and listed["nextCursor"] is None
    )
    assert set(steps["resources/templates/list"][0]["templates"]) == {
        "truloop://docs/{path}",
        "truloop://events/{event_id}",
        "truloop://schedules/{schedule_id}",
    }
    guide, document = steps["resources/read"]
    assert guide["mimeType"] == "text/markdown" and "search_knowledge_base" in guide["text"]
    assert document["mimeType"] == "text/markdown" and document["text"].startswith("# ")
    prompts = {prompt["name"]: prompt for prompt in steps["prompts/list"][0]["prompts"]}
    assert set(prompts) == {"plan_meeting", "summarise_inbox", "find_in_docs", "remember_this", "prepare_for_event"}
    assert prompts["plan_meeting"]["title"] == "Plan a meeting / 회의 잡기"
    assert [a["name"] for a in prompts["plan_meeting"]["arguments"] if a.get("required")] == ["people", "topic"]
    got, refused = steps["prompts/get"]
    assert "search_knowledge_base" in got["text"]
    assert refused["refused"]["invalidParams"] is True and "needs people" in refused["refused"]["message"]
    people, paths = steps["completion/complete"]
    assert "Kim Minji" in people["values"] and people["hasMore"] is False
    assert any(path.startswith("Team Handbook") for path in paths["values"])


def _inspector(home: Path, data_dir: Path, *args: str, flags: tuple[str, ...] = ()) -> dict[str, Any]:
    npx = _need("npx")
    cmd = [npx, "--no-install", "mcp-inspector", "--cli", *_server(data_dir, *flags), *args]
    done = _run(cmd, home)
    _assert_no_schema_rejection(done.stdout, done.stderr)
    # The Inspector CLI prints the JSON-RPC result and exits 0, isError or not; a client-side
    # exception would be a message on stderr and exit status 1.
    assert done.returncode == 0, f"inspector failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_inspector_cli_sees_every_result(node_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    listed = _inspector(node_home, data, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert "outputSchema" in tools["get_day_of_week"] and "outputSchema" in tools["forget_memory"]

    call = ("--method", "tools/call", "--tool-name")
    success = _inspector(node_home, data, *call, "get_day_of_week", "--tool-arg", "date=2026-03-10")
    assert success.get("isError", False) is False and success["structuredContent"] == DAY, success

    invalid = _inspector(node_home, data, *call, "get_day_of_week", "--tool-arg", "date=not-a-date")
    assert "YYYY-MM-DD" in _assert_error_result(invalid, "validation")

    unknown = _inspector(node_home, data, *call, "no_such_tool")
    assert "get_day_of_week" in _assert_error_result(unknown, "unknown_tool")

    # The Inspector CLI declares no elicitation capability, so it cannot decline a confirmation; the
    # cancelled envelope is reached instead with --confirm strict (a destructive tool, no way to ask).
    saved = _inspector(node_home, data, *call, "save_memory", "--tool-arg", "content=a fact to forget")
    memory = saved["structuredContent"]["id"]  # a memory that exists: the check before asking lets the call on
    cancelled = _inspector(
        node_home, data, *call, "forget_memory", "--tool-arg", f"memory_id={memory}", flags=("--confirm", "strict")
    )
    assert _assert_error_result(cancelled, "cancelled", status="cancelled").startswith("Cancelled")


def test_typescript_sdk_client_runs_a_destructive_tool_as_a_task(node_home: Path, tmp_path: Path) -> None:
    """The SDK's experimental tasks API (2025-11-25): the call answers with a task at once; the confirmation reaches
    the client's elicitation handler carrying the related-task `_meta`; the result comes from the task."""
    node = _need("node")
    done = _run([node, str(TS_DIR / "tasks_client.mjs"), *_server(tmp_path / "data")], node_home)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert done.returncode == 0, f"client failed:\n{done.stdout}\n{done.stderr}"
    steps = {line["step"]: line for line in lines}
    assert steps["initialize"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    support = steps["tools/list"]["taskSupport"]
    assert support["forget_memory"] == "optional" and "get_day_of_week" not in support
    stream = [line for line in lines if line["step"] == "stream"]
    assert stream[0]["type"] == "taskCreated" and stream[-1]["type"] == "result", stream
    task_id = stream[0]["taskId"]
    assert (
        steps["elicitation"]["relatedTask"] == {"taskId": task_id}
        and steps["elicitation"]["message"] == "Forget the memory '지난주 회의록은 폐기'? This cannot be undone."
    )
    result = stream[-1]
    assert result["isError"] is False and result["structuredContent"] == {
        "memory_id": result["memoryId"],
        "forgotten": True,
    }
    assert steps["tasks/list"]["tasks"] == [{"taskId": task_id, "status": "completed"}]


def test_typescript_sdk_client_sees_the_apps_only_when_it_negotiates_them(node_home: Path, tmp_path: Path) -> None:
    """A client declaring io.modelcontextprotocol/ui sees `_meta.ui.resourceUri` on the bound tools and the apps in
    `resources/list`; one that does not sees the same tools without it, and no app listed. Both can read an app."""
    node = _need("node")
    done = _run([node, str(TS_DIR / "apps_client.mjs"), *_server(tmp_path / "data")], node_home)
    assert done.returncode == 0, f"client failed:\n{done.stdout}\n{done.stderr}"
    with_apps, without = (json.loads(line) for line in done.stdout.splitlines() if line.strip())
    assert with_apps["apps"] is True and without["apps"] is False
    bound = {
        name: tool["_meta"]["ui"]["resourceUri"]
        for name, tool in with_apps["tools"].items()
        if "ui" in tool.get("_meta", {})
    }
    assert bound["get_events"] == bound["create_event"] == bound["update_event"] == "ui://truloop/event.html"
    assert bound["forget_memory"] == bound["delete_event"] == "ui://truloop/confirm.html"
    assert "get_day_of_week" not in bound
    assert {uri for uri in with_apps["resources"] if uri.startswith("ui://")} == {
        "ui://truloop/event.html", "ui://truloop/confirm.html"
    }  # fmt: skip
    # without the extension: the very same tools, nothing of the apps in them, no app listed
    unbound = {name: {k: v for k, v in tool.items() if k != "_meta"} for name, tool in with_apps["tools"].items()}
    assert {name: {k: v for k, v in tool.items() if k != "_meta"} for name, tool in without["tools"].items()} == unbound
    assert not any("_meta" in tool for tool in without["tools"].values())
    assert not [uri for uri in without["resources"] if uri.startswith("ui://")]
    for read in (with_apps["read"], without["read"]):
        assert all(
            found["mimeType"] == "text/html;profile=mcp-app" and found["size"] < 60_000 for found in read.values()
        )
