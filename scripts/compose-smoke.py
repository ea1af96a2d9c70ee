"""Check a running compose.yaml deployment through its balancer: a handshake-era session (initialize, list,
calls, an inline elicitation) that stays on one replica, a deferred call answered by a device on the
agent-rpc stream, and 2026-07-28 calls spread over both replicas. Prints which replica answered what.

    TRULOOP_JWT_SECRET=... .venv/bin/python scripts/compose-smoke.py [http://127.0.0.1:8080]

Runs with the project installed (its virtualenv, or the image: `podman run --rm --network host -e
TRULOOP_JWT_SECRET -v ./scripts:/s:ro localhost/truloop-mcp python3 /s/compose-smoke.py`).
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections import Counter
from typing import Any

import anyio
import httpx
import jwt
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bridge.device import DeviceSimulator

CALENDAR = {"notification_message": "Reading your calendar", "start_date": "2026-03-09T00:00:00+09:00",
            "end_date": "2026-03-15T23:59:59+09:00"}  # fmt: skip


def bearer(user: str) -> str:
    claims = {"sub": user, "role": "member", "exp": int(time.time()) + 600}
    return jwt.encode(claims, os.environ["TRULOOP_JWT_SECRET"], algorithm="HS256")


def client(base: str, user: str, seen: list[tuple[str, str]], mode: str, **options: Any) -> Client:
    import httpx2

    async def note(response: Any) -> None:
        seen.append((response.headers.get("x-truloop-replica", "?"), response.headers.get("mcp-session-id") or "-"))

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {bearer(user)}"}, timeout=30, event_hooks={"response": [note]}
    )
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, **options)  # type: ignore[arg-type]


async def main(base: str) -> int:
    user = "smoke-" + secrets.token_hex(3)
    with anyio.fail_after(120):
        async with httpx.AsyncClient() as http:
            health = [(await http.get(f"{base}/healthz")) for _ in range(4)]
        print("healthz:", [(r.headers.get("x-truloop-replica"), r.json()["status"]) for r in health])

        async def elicit(context: Any, params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"status": "granted"})

        legacy: list[tuple[str, str]] = []
        async with client(base, user, legacy, "legacy", elicitation_callback=elicit) as session:
            tools = await session.list_tools()
            days = [await session.call_tool("get_day_of_week", {"date": f"2026-03-1{d}"}) for d in range(3)]
            asked = await session.call_tool(
                "get_permission_status", {"notification_message": "Checking", "permission": "location"}
            )
        print(f"legacy session: {len(tools.tools)} tools, days {[d.structured_content for d in days]}, "
              f"elicited {asked.structured_content}")  # fmt: skip
        print("  replicas of its requests:", Counter(r for r, _ in legacy), "sessions:", {s for _, s in legacy} - {"-"})
        ok = len({r for r, _ in legacy}) == 1 and not asked.is_error

        device = DeviceSimulator(base, bearer(user))
        modern: list[tuple[str, str]] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(device.run)
            await device.connected.wait()
            async with client(base, user, modern, "auto") as stateless:
                calls = [await stateless.call_tool("get_calendar_events", CALENDAR) for _ in range(4)]
            tg.cancel_scope.cancel()
        print("2026-07-28 device calls:", [len((c.structured_content or {}).get("events", [])) for c in calls],
              "events each; answered by the device:", [a["status"] for a in device.answered])  # fmt: skip
        print("  replicas of its requests:", Counter(r for r, _ in modern))
        ok = ok and not any(c.is_error for c in calls) and {r for r, _ in modern} == {"a", "b"}
    print("smoke:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"))
