"""The composition root: two deployments with different settings in one process share nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from server.runtime.composition import Deployment
from tests.plugin_files import plugin_source
from tests.support import error_of, settings

pytestmark = pytest.mark.anyio

GATES = 'builtin = true\n\n[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n'


def parts(deployment: Deployment) -> dict[str, Any]:
    """Everything a deployment built for itself (module-level tool definitions, which never change, aside)."""
    door = deployment.front_door
    found: dict[str, Any] = {
        "services": deployment.services,
        "bridge": deployment.bridge,
        "bridge backend": deployment.bridge.backend,
        "front door": door,
        "profiles": door.profiles,
        "exposure": door.exposure,
        "gates": door.exposure.gates,
        "conversations": door.conversations,
        "toolsets": deployment.toolsets,
    }
    for name, toolset in door.profiles.items():
        found[f"profile {name}"] = toolset
        found[f"middleware of {name}"] = getattr(toolset, "middleware", None) or getattr(
            getattr(toolset, "wrapped", None), "middleware", ()
        )
    for name, toolset in deployment.toolsets.items():
        found[f"combined {name}"] = toolset
    if deployment.plugins is not None:
        found["plugins"] = deployment.plugins
        found["canary"] = deployment.plugins.canary
        found["plugin changes"] = deployment.plugins.changes
    return found


async def test_two_deployments_in_one_process_share_nothing(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lookup.py").write_text(plugin_source("lookup", "def run(input_data, context):\n    return {}\n"))
    (tmp_path / "gates.toml").write_text(GATES)
    with_plugins = Deployment(
        settings(data_dir=tmp_path / "one", tools_dir=tools, gates=tmp_path / "gates.toml", exposure="progressive")
    )
    plain = Deployment(settings(data_dir=tmp_path / "two"))

    async with with_plugins, plain:
        one, two = parts(with_plugins), parts(plain)
        shared = {
            name
            for name, value in one.items()
            if any(value is other for other in two.values() if other is not None and other != ())
        }
        assert shared == set()
        assert plain.plugins is None and with_plugins.plugins is not None

        first, second = with_plugins.mcp_server(), plain.mcp_server()
        async with Client(first) as a, Client(second) as b:
            listed_a = {tool.name for tool in (await a.list_tools()).tools}
            listed_b = {tool.name for tool in (await b.list_tools()).tools}
            assert "lookup" in listed_a and "lookup" not in listed_b
            assert {"list_toolsets", "load_toolset"} <= listed_a and not {"list_toolsets", "load_toolset"} & listed_b
            gated = await a.call_tool("save_memory", {"content": "first"})
            assert error_of(gated)["code"] == "precondition"
            allowed = await b.call_tool("save_memory", {"content": "first"})
            assert not allowed.is_error
            # what one deployment stored, the other never sees (each its own store)
            found = await a.call_tool("search_memories", {"query": "first"})
            assert found.structured_content is not None and found.structured_content["count"] == 0
    await with_plugins.services.aclose()
    await plain.services.aclose()


def test_nothing_is_composed_at_module_level() -> None:
    """The profiles and the front door are made per deployment, never cached on a module."""
    import toolsets.profiles as profiles

    one, two = profiles.build_profiles(), profiles.build_profiles()
    assert one is not two and one["member"] is not two["member"]
    assert not hasattr(profiles, "profiles") and not hasattr(profiles, "MIDDLEWARE")
