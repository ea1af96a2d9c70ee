"""The feedback store on both backends: a tool's entries newest first, only the newest `MAX_FEEDBACK_PER_TOOL`
kept per tool (another tool's untouched), `limit` bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import services_for
from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL, FeedbackEntry

pytestmark = pytest.mark.anyio


def entry(tool: str, n: int) -> FeedbackEntry:
    return FeedbackEntry(
        id=f"fb_{tool}_{n:04d}",
        tool=tool,
        version="v1",
        kind="call",
        route="stable",
        at=1_700_000_000.0 + n,
        arguments={"n": n},
        code="handler_error",
        message=f"failure {n}",
    )


@pytest.mark.timeout(60)
async def test_entries_are_bounded_per_tool(store_backend: str, tmp_path: Path) -> None:
    services = services_for(tmp_path)
    try:
        store = services.feedback
        await store.add(entry("other", 0))
        for n in range(MAX_FEEDBACK_PER_TOOL + 7):
            await store.add(entry("shout", n))
        kept = await store.recent("shout", 1000)
        assert len(kept) == MAX_FEEDBACK_PER_TOOL
        assert kept[0].arguments == {"n": MAX_FEEDBACK_PER_TOOL + 6} and kept[-1].arguments == {"n": 7}
        assert [e.message for e in await store.recent("shout", 2)] == ["failure 56", "failure 55"]
        assert [e.tool for e in await store.recent("other")] == ["other"]
        assert await store.recent("nobody") == []
    finally:
        await services.aclose()
