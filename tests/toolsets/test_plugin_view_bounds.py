"""The parts that bound plugin resources, one by one: template values checked once decoded, the context's contained
opener, the content bound, and the plugin threads replacing a thread abandoned at its timeout (up to a ceiling)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import anyio
import pytest

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.plugins import uri_template
from toolsets.extensions.plugins.content_bound import over_bound
from toolsets.extensions.plugins.context import PluginContext, ResourceTooLarge
from toolsets.extensions.plugins.threads import PluginThreads
from toolsets.extensions.plugins.view_slots import ViewSlots
from toolsets.extensions.plugins.worker import bounded

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("uri", ["n://d/..%2Fx", "n://d/a%2Fb", "n://d/a%5Cb", "n://d/a%00b", "n://d/..", "n://d/."])
def test_a_segment_value_is_checked_once_decoded(uri: str) -> None:
    params = uri_template.match("n://d/{date}", uri)
    assert params is not None
    with pytest.raises(ValueError, match="'date'"):
        uri_template.checked("n://d/{date}", params)


@pytest.mark.parametrize("value", ["..%2Fx", "a/../../x", "%2Fetc%2Fpasswd", "a//b", "a%5Cb", "./a"])
def test_a_path_value_stays_relative(value: str) -> None:
    params = uri_template.match("n://f/{+path}", f"n://f/{value}")
    assert params is not None
    with pytest.raises(ValueError, match="'path'"):
        uri_template.checked("n://f/{+path}", params)


def test_good_values_pass() -> None:
    assert uri_template.checked("n://d/{date}", uri_template.match("n://d/{date}", "n://d/2026-03-10") or {})
    assert uri_template.match("n://f/{+path}", "n://f/a/b%20c.md") == {"path": "a/b c.md"}
    assert uri_template.variables("n://{kind}/{+path}") == ["kind", "path"]


def context_in(folder: Path, limit: int = 1024) -> PluginContext:
    return PluginContext("t", "v", folder, logging.getLogger("t"), max_read_bytes=limit)


def test_the_context_opens_only_inside_its_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "a.md").write_text("inside")
    (tmp_path / "secret.md").write_text("outside")
    os.symlink(tmp_path / "secret.md", data / "out.md")
    os.symlink(tmp_path, data / "up")
    context = context_in(data)
    assert context.read_text("sub/a.md") == "inside"
    for path in ("out.md", "up/secret.md", "../secret.md", "sub/../../secret.md", str(tmp_path / "secret.md")):
        with pytest.raises(FileNotFoundError):
            context.read_data(path)


def test_reading_stops_past_the_bound(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 2000)
    with pytest.raises(ResourceTooLarge):
        context_in(tmp_path, limit=1000).read_data("big.bin")


def test_the_content_bound_counts_bytes_before_encoding() -> None:
    assert not over_bound("한" * 300, 900) and over_bound("한" * 301, 900)
    assert over_bound([b"x" * 600, {"text": "y" * 600}], 1000)
    assert not over_bound({"blob": "eHh4"}, 3) and over_bound({"blob": "eHh4eA=="}, 3)
    assert bounded(b"x" * 5000, 1000) == b"x" * 1001 and bounded("ok", 1000) == "ok"


@pytest.mark.anyio
async def test_a_thread_abandoned_at_its_timeout_is_replaced_up_to_a_ceiling() -> None:
    threads = PluginThreads(size=1, max_abandoned=2)
    release = threading.Event()
    try:
        with anyio.move_on_after(0.2):
            await threads.run(release.wait, owner="hung")
        assert threads.abandoned_by("hung") == 1 and threads.alive == 0
        with anyio.fail_after(5):  # the pool of one took a fresh thread: this call is not stuck behind the hung one
            assert await threads.run(lambda: "fresh", owner="other") == "fresh"
        with anyio.move_on_after(0.2):
            await threads.run(release.wait, owner="hung")  # a second one left running: the ceiling
        with pytest.raises(ToolError) as refused:
            await threads.run(lambda: "never")
        assert refused.value.code is ErrorCode.RATE_LIMITED and "Retry" in refused.value.message
    finally:
        release.set()
    with anyio.fail_after(5):
        while threads.abandoned:  # noqa: ASYNC110 - the threads end on their own; there is no event to await
            await anyio.sleep(0.01)
    assert await threads.run(lambda: "again") == "again"


def test_slots_are_bounded_per_plugin_and_per_user() -> None:
    slots = ViewSlots(per_plugin=2, per_user=2, still_running=lambda plugin: 1 if plugin == "hung" else 0)
    with slots.held("a", "a", "u1"), slots.held("b", "b", "u1"):
        with pytest.raises(ToolError, match="you already have 2"), slots.held("c", "c", "u1"):
            pass
        with slots.held("a", "a", "u2"), pytest.raises(ToolError, match="a is busy"), slots.held("a", "a", "u3"):
            pass
    with slots.held("hung", "hung", "u1"), pytest.raises(ToolError, match="h is busy"), slots.held("hung", "h", "u2"):
        pass
    assert slots.in_flight("a") == 0
