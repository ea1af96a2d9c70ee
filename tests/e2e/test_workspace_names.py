"""A workspace file whose name is not valid UTF-8 never breaks the client: `list_files` leaves it out and says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support import TRULOOP, child_env

pytestmark = pytest.mark.anyio


def write_named(raw_path: bytes) -> None:
    """A file whose name is raw bytes (no text `Path` can name it)."""
    fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"x")
    os.close(fd)


async def test_an_undecodable_name_is_left_out_with_a_count(tmp_path: Path) -> None:
    room = tmp_path / "room"
    (room / "sub").mkdir(parents=True)
    (room / "fine.txt").write_text("ok")
    (room / "잘됨.md").write_text("ok")
    write_named(os.path.join(os.fsencode(room), b"bad\xff\nname.txt"))
    write_named(os.path.join(os.fsencode(room / "sub"), b"\xc3\x28.txt"))
    params = StdioServerParameters(
        command=TRULOOP, args=["--workspace", str(room), "--data-dir", str(tmp_path / "data")], env=child_env()
    )
    async with Client(params) as client:
        flat = await client.call_tool("list_files", {})
        deep = await client.call_tool("list_files", {"recursive": True})
    assert not flat.is_error and not deep.is_error  # the SDK client parsed both replies
    listed = flat.structured_content
    assert listed is not None and listed["unlisted"] == 1
    assert {entry["path"] for entry in listed["entries"]} == {"fine.txt", "sub", "잘됨.md"}
    assert deep.structured_content is not None and deep.structured_content["unlisted"] == 2
