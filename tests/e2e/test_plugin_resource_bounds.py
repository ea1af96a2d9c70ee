"""Plugin resources driven as a guest through the installed HTTP server: a template's parameters are checked after
percent-decoding (a `{+path}` is opened inside the plugin's data folder, no symlink followed out), contents past
`--max-resource-bytes` are refused without the server's memory growing with them, and hung reads are bounded per
plugin and per user, so they starve nobody else's plugins."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support import SECRET, child_env, http_server_process, mcp_client, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

DAY = """
RESOURCE_SPEC = {"uri_template": "notes://day/{date}", "name": "day_notes", "profiles": ["guest"],
                 "mime_type": "text/plain"}

def run(params, context):
    return "asked for " + params["date"]
"""
FILES = """
import os

RESOURCE_SPEC = {"uri_template": "notes://file/{+path}", "name": "note_files", "profiles": ["guest"],
                 "mime_type": "text/markdown"}

def create(context):
    (context.data_dir / "sub").mkdir(exist_ok=True)
    (context.data_dir / "sub" / "plan.md").write_text("the plan")
    if not (context.data_dir / "out.md").is_symlink():
        os.symlink(OUTSIDE, context.data_dir / "out.md")
    return Files()

class Files:
    def run(self, params, context):
        return context.read_text(params["path"])
"""
HANG = """
import time

RESOURCE_SPEC = {"uri": "notes://slow/NAME", "name": "slow_NAME", "profiles": ["guest"], "timeout_s": SECONDS}

def run(params, context):
    time.sleep(SLEEP)
    return "slept"
"""
OTHER = """
RESOURCE_SPEC = {"uri": "notes://other", "name": "other"}

def run(params, context):
    return "fine"
"""
BIG = """
RESOURCE_SPEC = {"uri": "notes://big", "name": "big", "profiles": ["guest"]}

def run(params, context):
    return b"x" * (64 << 20)
"""
BIG_FILE = """
RESOURCE_SPEC = {"uri": "notes://big-file", "name": "big_file", "profiles": ["guest"]}

def create(context):
    with open(context.data_dir / "big.bin", "wb") as big:
        big.truncate(64 << 20)  # sparse: 64 MiB that take no disk
    return Reader()

class Reader:
    def run(self, params, context):
        return context.read_data("big.bin")
"""


def hang(name: str, seconds: float, sleep: float) -> str:
    return HANG.replace("NAME", name).replace("SECONDS", str(seconds)).replace("SLEEP", str(sleep))


def tools_folder(tmp_path: Path, **files: str) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, text in files.items():
        (tools / f"{name}.py").write_text(text.lstrip())
    return tools


def serve(tools: Path, tmp_path: Path, *args: str) -> Any:
    return http_server_process(
        "--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"), *args, env=child_env(TRULOOP_JWT_SECRET=SECRET)
    )


async def refusal(client: Any, uri: str) -> types.ErrorData:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    return refused.value.error


async def served(client: Any, uri: str, seconds: float = 10.0) -> None:
    """Wait until the plugin serving `uri` is loaded (the folder is read in the background)."""
    with anyio.fail_after(seconds):
        while True:
            try:
                await client.read_resource(uri)
                return
            except MCPError as exc:
                if exc.error.message.startswith("No resource "):
                    await anyio.sleep(0.1)
                    continue
                return


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


async def test_template_parameters_are_checked_after_decoding_and_paths_stay_inside(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("member-only knowledge")
    tools = tools_folder(tmp_path, day=DAY, files=FILES.replace("OUTSIDE", repr(str(secret))))
    with serve(tools, tmp_path) as (base, _, _):
        async with mcp_client(base, token("gus", role="guest")) as guest:
            await served(guest, "notes://day/2026-03-10")
            day = await guest.read_resource("notes://day/2026-03-10")
            plain = {uri: await refusal(guest, uri) for uri in (
                "notes://day/..%2Fsecret", "notes://day/a%2Fb", "notes://day/a%5Cb", "notes://day/..", "notes://day/a%00b",
            )}  # fmt: skip
            plan = await guest.read_resource("notes://file/sub/plan.md")
            climbing = await refusal(guest, "notes://file/..%2F..%2F..%2Fsecret.md")
            dotted = await refusal(guest, "notes://file/sub/../../secret.md")
            linked = await refusal(guest, "notes://file/out.md")
    assert day.contents[0].text == "asked for 2026-03-10"  # type: ignore[union-attr]
    for uri, error in plain.items():
        assert error.code == types.INVALID_PARAMS, uri
        assert "%00" in uri or "'date'" in error.message, (uri, error.message)
    assert plan.contents[0].text == "the plan"  # type: ignore[union-attr]
    assert climbing.code == types.INVALID_PARAMS and "'path'" in climbing.message
    assert dotted.code == types.INVALID_PARAMS or "member-only" not in dotted.message
    assert "member-only" not in linked.message  # a symlink out of the data folder is not followed
    assert linked.code == types.INTERNAL_ERROR and "FileNotFoundError" in linked.message


async def test_contents_past_the_bound_are_refused_and_do_not_grow_the_server(tmp_path: Path) -> None:
    tools = tools_folder(tmp_path, big=BIG, big_file=BIG_FILE)
    with serve(tools, tmp_path) as (base, process, _):
        async with mcp_client(base, token("gus", role="guest")) as guest:
            await served(guest, "notes://big-file")
            before = memory(process.pid)
            from_file = await refusal(guest, "notes://big-file")
            after_file = memory(process.pid)
            in_memory = await refusal(guest, "notes://big")
            await anyio.sleep(0.2)
            after = memory(process.pid)
    print(f"\nserver memory (KiB): before {before}, after the file read {after_file}, after the bytes {after}")
    for error in (from_file, in_memory):
        assert "larger than this server serves (8388608 bytes" in error.message, error.message
    # read with context.read_data: at most the bound (+1 byte) is ever read, so even the peak stays small
    assert after_file["VmHWM"] - before["VmHWM"] < 24 * 1024, (before, after_file)
    # handed back whole by the plugin: refused before it is encoded, and let go
    assert after["VmRSS"] - before["VmRSS"] < 24 * 1024, (before, after)


async def test_hung_reads_of_one_plugin_starve_no_other(tmp_path: Path) -> None:
    tools = tools_folder(tmp_path, slow=hang("a", 1, 30), other=OTHER)
    guests = [token(f"guest{n}", role="guest") for n in range(8)]
    with serve(tools, tmp_path) as (base, _, _):
        async with mcp_client(base, token("alice")) as member:
            await served(member, "notes://other")
            outcomes: list[str] = []

            async def hung_reads(bearer: str) -> None:
                async with mcp_client(base, bearer) as guest:
                    for _ in range(4):
                        try:
                            await guest.read_resource("notes://slow/a")
                            outcomes.append("read")
                        except MCPError as exc:
                            outcomes.append("busy" if "Busy" in exc.error.message else "timeout")

            async with anyio.create_task_group() as tg:  # 8 guests x 4 reads: 32 reads of a plugin that hangs
                for bearer in guests:
                    tg.start_soon(hung_reads, bearer)
            started = time.monotonic()
            with anyio.fail_after(5):
                other = await member.read_resource("notes://other")
            answered = time.monotonic() - started
    timed_out, busy = outcomes.count("timeout"), outcomes.count("busy")
    print(f"\n32 hung reads: {timed_out} timed out, {busy} busy; the member's read then took {answered:.2f} s")
    assert len(outcomes) == 32 and "read" not in outcomes
    assert outcomes.count("timeout") <= 4  # the plugin holds at most 4 threads, however often it is asked
    assert other.contents[0].text == "fine" and answered < 3  # type: ignore[union-attr]


async def test_one_user_has_at_most_four_reads_running(tmp_path: Path) -> None:
    tools = tools_folder(tmp_path, one=hang("one", 10, 1.5), two=hang("two", 10, 1.5))
    with serve(tools, tmp_path) as (base, _, _):
        async with (
            mcp_client(base, token("gus", role="guest")) as guest,
            mcp_client(base, token("gwen", role="guest")) as other_guest,
        ):
            await served(guest, "notes://slow/one")
            answers: list[str] = []

            async def read(client: Any, uri: str) -> None:
                try:
                    answers.append((await client.read_resource(uri)).contents[0].text)
                except MCPError as exc:
                    answers.append(exc.error.message)

            async with anyio.create_task_group() as tg:
                for uri in ("notes://slow/one", "notes://slow/two") * 3:  # 6 at once, 3 per plugin
                    tg.start_soon(read, guest, uri)
                await anyio.sleep(0.5)
                tg.start_soon(read, other_guest, "notes://slow/two")  # another user is not held back by gus
    busy = [answer for answer in answers if answer.startswith("Busy")]
    assert len(answers) == 7 and answers.count("slept") == 5, answers
    assert len(busy) == 2 and all("4 plugin resource reads" in answer for answer in busy), busy
