"""MCP Apps over 2026-07-28 HTTP: `server/discover` advertises the extension, and each request's own client
capabilities decide whether its `tools/list` and `resources/list` carry the apps; an app reads the same either way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import SECRET, child_env, modern_request, spawn_http_server, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

APPS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        yield base


async def ask(base: str, bearer: str, method: str, params: dict[str, Any], caps: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=15) as client:
        return await modern_request(client, base, bearer, method, params, caps)


def bound(listed: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t["_meta"]["ui"]["resourceUri"] for t in listed["tools"] if "ui" in (t.get("_meta") or {})}


async def test_each_request_decides_whether_it_sees_the_apps(server: str) -> None:
    member, guest = token(sub="alice"), token(sub="gus", role="guest")
    discovered = await ask(server, member, "server/discover", {}, {})
    assert discovered["capabilities"]["extensions"]["io.modelcontextprotocol/ui"] == {
        "mimeTypes": ["text/html;profile=mcp-app"]
    }

    with_apps = await ask(server, member, "tools/list", {}, APPS)
    assert bound(with_apps)["get_events"] == "ui://truloop/event.html"
    assert bound(with_apps)["delete_event"] == "ui://truloop/confirm.html"
    plain = await ask(server, member, "tools/list", {}, {})
    assert bound(plain) == {}
    assert [t["name"] for t in plain["tools"]] == [t["name"] for t in with_apps["tools"]]

    guest_tools = bound(await ask(server, guest, "tools/list", {}, APPS))
    assert guest_tools == {
        "get_event_details": "ui://truloop/availability.html",
        "update_guest_availability": "ui://truloop/availability.html",
        "list_invited_events": "ui://truloop/event.html",
    }
    listed = await ask(server, guest, "resources/list", {}, APPS)
    assert {r["uri"] for r in listed["resources"] if r["uri"].startswith("ui://")} == {
        "ui://truloop/availability.html",
        "ui://truloop/event.html",
    }
    unlisted = await ask(server, guest, "resources/list", {}, {})
    assert not [r for r in unlisted["resources"] if r["uri"].startswith("ui://")]

    read = await ask(server, guest, "resources/read", {"uri": "ui://truloop/availability.html"}, {})
    (contents,) = read["contents"]
    assert contents["mimeType"] == "text/html;profile=mcp-app" and contents["text"].startswith("<!doctype html>")
    assert "http://" not in contents["text"] and "https://" not in contents["text"]  # nothing from the network
