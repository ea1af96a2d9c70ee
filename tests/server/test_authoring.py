"""Tool authoring by the model (`--tools-dir DIR --tool-authoring`): the `custom_tools` toolset through the MCP
`Client` (in process over `Deployment(...).mcp_server()`, and a real stdio subprocess). The folder runs in the
sandbox whatever `--plugin-isolation` says (test_authoring_contained.py attacks it).

A new tool is written pending, checked, and serves on trial until its first calls succeed (a failing trial call
sends it back to pending); a new version of a served tool becomes a canary candidate and never replaces the stable
file; names are validated; every action is an `authoring` audit line; the toolset is published only where the
settings allow it (stdio, or HTTP with `--tool-authoring-http`; never to guests or notification-safe)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from server.runtime.composition import Deployment
from tests.plugin_files import plugin_source, serving
from tests.support import TRULOOP, answering, child_env, error_of, eventually, settings

pytestmark = pytest.mark.anyio
ISOLATIONS = ["sandbox", "inprocess"]  # both mean the sandbox once authoring is on
AUTHORING = {
    "list_custom_tools",
    "tool_registry_status",
    "create_or_update_custom_tool_file",
    "delete_custom_tool_file",
    "reload_custom_tools",
}
SHOUT = """
def run(input_data, context):
    return {"text": input_data.get("text", "").upper()}
"""
SHOUT_V2 = """
def run(input_data, context):
    return {"text": input_data.get("text", "").upper() + "!"}
"""
FLAKY = """
def run(input_data, context):
    raise RuntimeError("not ready")
"""
ACCEPT = answering("accept", {"confirm": True})


def authoring(tools: Path, data: Path, **overrides: Any) -> Any:
    return serving(tools, data, tool_authoring=True, **overrides)


def client(server: Any, **options: Any) -> Client:
    return Client(server, mode="legacy", elicitation_callback=options.pop("callback", ACCEPT), **options)


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def status_of(client: Client, file: str) -> dict[str, Any]:
    files = (await call(client, "tool_registry_status"))["files"]
    return next(entry for entry in files if entry["file"] == file)


def authoring_lines(data: Path) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [line for line in lines if line["event"] == "authoring"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_a_new_tool_is_checked_then_serves_on_trial_then_is_active(
    isolation: str, tools: Path, data: Path
) -> None:
    source = plugin_source("shout", SHOUT)
    async with authoring(tools, data, plugin_isolation=isolation) as server, client(server) as c:
        listed = {tool.name for tool in (await c.list_tools()).tools}
        assert listed >= AUTHORING and "shout" not in listed
        written = await call(c, "create_or_update_custom_tool_file", {"name": "shout", "source": source})
        assert written["state"] == "trial" and written["file"] == "shout.py" and written["error"] is None
        assert (tools / "shout.py").read_text() == source and not (tools / "shout.py.pending").exists()
        assert (await status_of(c, "shout.py"))["state"] == "trial"
        for n in range(3):
            assert (await call(c, "shout", {"text": f"hi{n}"}))["text"] == f"HI{n}"
        served = await status_of(c, "shout.py")
        assert served["state"] == "serving" and served["version"] == written["version"]
        listing = await call(c, "list_custom_tools")
        assert "shout.py" in listing["files"] and {t["name"] for t in listing["loaded"]} == {"shout"}
        await eventually(lambda: len(authoring_lines(data)) >= 2)
    actions = [(line["action"], line["tool_name"], line["state"]) for line in authoring_lines(data)]
    assert actions == [("create_or_update", "shout", "trial"), ("trial_passed", "shout", "active")]
    assert authoring_lines(data)[0]["user_id"] == "alice"


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_a_new_tool_that_fails_its_check_stays_pending_with_the_reason(
    isolation: str, tools: Path, data: Path
) -> None:
    broken = plugin_source("half", "def run(input_data, context)\n    return {}\n")
    async with authoring(tools, data, plugin_isolation=isolation) as server, client(server) as c:
        written = await call(c, "create_or_update_custom_tool_file", {"name": "half", "source": broken})
        assert written["state"] == "pending" and "syntax error" in written["error"]
        assert (tools / "half.py.pending").exists() and not (tools / "half.py").exists()
        pending = await status_of(c, "half.py.pending")
        assert pending["state"] == "pending" and pending["error"] == written["error"]  # verbatim
        assert "half" not in {tool.name for tool in (await c.list_tools()).tools}
        mismatch = plugin_source("other_name", SHOUT)
        refused = await call(c, "create_or_update_custom_tool_file", {"name": "half", "source": mismatch})
        assert refused["state"] == "pending" and "must be 'half'" in refused["error"]
        builtin = plugin_source("get_day_of_week", SHOUT)
        taken = await call(c, "create_or_update_custom_tool_file", {"name": "get_day_of_week", "source": builtin})
        assert taken["state"] == "pending" and "built-in" in taken["error"]


async def test_a_failing_trial_call_sends_the_tool_back_to_pending(tools: Path, data: Path) -> None:
    async with authoring(tools, data) as server, client(server) as c:
        written = await call(
            c, "create_or_update_custom_tool_file", {"name": "flaky", "source": plugin_source("flaky", FLAKY)}
        )
        assert written["state"] == "trial"
        assert error_of(await c.call_tool("flaky", {}))["code"] == "handler_error"
        await eventually(lambda: (tools / "flaky.py.pending").exists() and not (tools / "flaky.py").exists())
        pending = await status_of(c, "flaky.py.pending")
        assert pending["state"] == "pending" and "trial call 1 of 3 failed: handler_error" in pending["error"]
        assert error_of(await c.call_tool("flaky", {}))["code"] == "unknown_tool"
        await eventually(lambda: "trial_failed" in [line["action"] for line in authoring_lines(data)])


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_a_new_version_of_a_served_tool_goes_through_the_canary(isolation: str, tools: Path, data: Path) -> None:
    stable = plugin_source("shout", SHOUT)
    (tools / "shout.py").write_text(stable)
    async with authoring(tools, data, plugin_isolation=isolation) as server, client(server) as c:
        written = await call(
            c, "create_or_update_custom_tool_file", {"name": "shout", "source": plugin_source("shout", SHOUT_V2)}
        )
        assert written["state"] == "candidate" and written["file"] == "shout.canary.py"
        assert (tools / "shout.py").read_text() == stable  # never straight to stable
        rollout = await server.deployment.plugins.canary.store.load("shout")
        assert rollout is not None and rollout.candidate == written["version"] and rollout.share == 10
        entry = await status_of(c, "shout.canary.py")
        assert entry["state"] == "candidate" and "10% of calls" in entry["detail"]
        bad = await c.call_tool("create_or_update_custom_tool_file", {"name": "shout", "source": "TOOL_SPEC = 1\n"})
        refusal = error_of(bad)
        assert refusal["code"] == "validation" and "TOOL_SPEC" in refusal["reason"]
        assert "upper() + " in (tools / "shout.canary.py").read_text()  # the refused version was not written


async def test_names_are_validated(tools: Path, data: Path) -> None:
    async with authoring(tools, data) as server, client(server) as c:
        for name in ("../evil", "a/b", "_hidden", "dotted.name", "", "9lives", "x" * 65, "a\\b"):
            result = await c.call_tool("create_or_update_custom_tool_file", {"name": name, "source": "x = 1\n"})
            assert error_of(result)["code"] == "validation", name
            result = await c.call_tool("delete_custom_tool_file", {"name": name})
            assert error_of(result)["code"] == "validation", name
    assert not any(tools.iterdir()) and not any(tools.parent.glob("evil*"))  # noqa: ASYNC240 - nothing written anywhere


async def test_delete_and_reload(tools: Path, data: Path) -> None:
    (tools / "owner.py").write_text(plugin_source("taken", SHOUT))
    async with authoring(tools, data) as server, client(server) as c:
        written = await call(
            c, "create_or_update_custom_tool_file", {"name": "taken", "source": plugin_source("taken", SHOUT_V2)}
        )
        assert written["state"] == "candidate"  # served (from owner.py): a candidate, not a second tool
        shout = await call(
            c, "create_or_update_custom_tool_file", {"name": "shout", "source": plugin_source("shout", SHOUT)}
        )
        assert shout["state"] == "trial"
        deleted = await call(c, "delete_custom_tool_file", {"name": "shout"})
        assert deleted["state"] == "deleted" and not (tools / "shout.py").exists()
        assert list((tools / ".history").glob("shout.py.*"))
        assert error_of(await c.call_tool("shout", {}))["code"] == "unknown_tool"
        missing = await c.call_tool("delete_custom_tool_file", {"name": "shout"})
        assert error_of(missing)["code"] == "not_found"
        # a pending file whose name is taken by another file serves once reload finds the name free
        (tools / "mine.py.pending").write_text(plugin_source("mine", SHOUT))
        (tools / "mine_owner.py").write_text(plugin_source("mine", SHOUT))
        await eventually(lambda: "mine" in server.deployment.plugins.versions())
        reloaded = await call(c, "reload_custom_tools")
        assert [r["state"] for r in reloaded["checked"]] == []  # "mine" serves from mine_owner.py: left pending
        (tools / "mine_owner.py").unlink()
        await eventually(lambda: "mine" not in server.deployment.plugins.versions())
        reloaded = await call(c, "reload_custom_tools")
        assert [(r["name"], r["state"]) for r in reloaded["checked"]] == [("mine", "trial")]
        assert "mine" in reloaded["served"] and (tools / "mine.py").exists()

        def audited() -> bool:
            actions = [line["action"] for line in authoring_lines(data)]
            return actions.count("delete") == 1 and actions.count("reload") == 2

        await eventually(audited)


async def test_declined_confirmation_writes_nothing(tools: Path, data: Path) -> None:
    async with authoring(tools, data) as server, client(server, callback=answering("decline")) as c:
        listed = {tool.name: tool for tool in (await c.list_tools()).tools}
        for name in ("create_or_update_custom_tool_file", "delete_custom_tool_file", "reload_custom_tools"):
            assert listed[name].annotations.destructive_hint is True  # type: ignore[union-attr]
        for name in ("list_custom_tools", "tool_registry_status"):
            assert listed[name].annotations.read_only_hint is True  # type: ignore[union-attr]
        result = await c.call_tool("create_or_update_custom_tool_file", {"name": "shout", "source": SHOUT})
        assert error_of(result)["code"] == "cancelled"
    assert not any(tools.iterdir())  # noqa: ASYNC240


@pytest.mark.parametrize(
    ("overrides", "published"),
    [
        ({}, False),
        ({"tool_authoring": True}, True),
        ({"tool_authoring": True, "transport": "http"}, False),
        ({"tool_authoring": True, "transport": "http", "tool_authoring_http": True}, True),
    ],
    ids=["off", "stdio", "http-without-flag", "http-with-flag"],
)
def test_where_the_toolset_is_published(overrides: dict[str, Any], published: bool, tools: Path, data: Path) -> None:
    deployment = Deployment(settings(tools_dir=tools, data_dir=data, **overrides))
    assert (deployment.authoring is not None) is published
    profiles = deployment.profiles
    assert (set(profiles["member"].names()) >= AUTHORING) is published
    assert not AUTHORING & set(profiles["guest"].names())
    assert not AUTHORING & set(profiles["notification-safe"].names())
    assert Deployment(settings(data_dir=data, tool_authoring=True)).authoring is None  # no tools folder, no tools


async def test_over_a_real_stdio_subprocess(tools: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=TRULOOP,
        args=["--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"), "--tool-authoring"],
        env=child_env(),
    )
    async with Client(params, mode="legacy", elicitation_callback=ACCEPT) as c:
        assert {tool.name for tool in (await c.list_tools()).tools} >= AUTHORING
        written = await call(
            c, "create_or_update_custom_tool_file", {"name": "shout", "source": plugin_source("shout", SHOUT)}
        )
        assert written["state"] == "trial"
        assert (await call(c, "shout", {"text": "hey"}))["text"] == "HEY"
        entry = await status_of(c, "shout.py")
        assert entry["state"] == "trial" and "1 of 3" in entry["detail"]


@pytest.mark.parametrize("isolation", ["inprocess", "process", "sandbox"])
def test_with_authoring_the_whole_folder_runs_in_the_sandbox(isolation: str, tools: Path, data: Path) -> None:
    catalog = Deployment(
        settings(tools_dir=tools, data_dir=data, tool_authoring=True, plugin_isolation=isolation)
    ).plugins
    assert catalog is not None and catalog.sandbox is not None
    assert catalog.config is not None and catalog.config.isolation == "sandbox"
    plain = Deployment(settings(tools_dir=tools, data_dir=data, plugin_isolation=isolation)).plugins
    assert plain is not None and (plain.sandbox is not None) == (isolation == "sandbox")
