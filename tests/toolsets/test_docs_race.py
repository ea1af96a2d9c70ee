"""The docs folder is read the way it was checked: a symlink renamed over a document between the check and the open
never leaks the file it points to (resources and the knowledge index); links that stay inside still work."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.host_views_data import Store, host_store
from tests.support import server_for
from toolsets.infra.store.knowledge.files import read_inside
from toolsets.infra.store.knowledge.prepare import prepare_batch

SECRET = "the launch codes are pineapple"
READS = 10_000
BOUND = 30.0  # seconds: the race runs until READS reads or this long, whichever comes first


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await host_store(tmp_path)


def outside_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    return secret


class Swapper(threading.Thread):
    """Renames, in a loop, a symlink to the outside secret, then a plain file, then a symlink staying inside,
    over `docs/race.md` (`rename(2)` is atomic: the name always exists)."""

    def __init__(self, docs: Path, secret: Path) -> None:
        super().__init__(daemon=True)
        self.docs, self.secret = docs, secret
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        race, spare = self.docs / "race.md", self.docs / ".race.tmp"
        (self.docs / "inside.md").write_text("# Inside\n\nnothing secret\n", encoding="utf-8")
        while not self.stop.is_set():
            for make in (
                lambda: spare.symlink_to(self.secret),
                lambda: spare.write_text("# Race\n\nplain\n", encoding="utf-8"),
                lambda: spare.symlink_to(self.docs / "inside.md"),
            ):
                spare.unlink(missing_ok=True)
                make()
                os.replace(spare, race)
                self.swaps += 1


@pytest.mark.anyio
async def test_a_symlink_swapped_over_a_document_never_leaks_the_outside_file(store: Store, tmp_path: Path) -> None:
    swapper = Swapper(store.docs, outside_secret(tmp_path))
    reads = leaks = served = refused = 0
    swapper.start()
    try:
        async with Client(server_for("member", services=store.services, user="alice")) as client:
            deadline = time.monotonic() + BOUND
            while reads < READS and time.monotonic() < deadline:
                reads += 1
                try:
                    body = (await client.read_resource("truloop://docs/race.md")).contents[0]
                except MCPError as error:
                    assert error.error.code == types.INVALID_PARAMS, error.error
                    refused += 1
                    continue
                served += 1
                leaks += SECRET in body.text  # type: ignore[union-attr]
    finally:
        swapper.stop.set()
        swapper.join()
    print(f"docs race: {reads} reads, {served} served, {refused} refused, {leaks} leaks, {swapper.swaps} swaps")
    assert leaks == 0
    assert reads >= 1000 and swapper.swaps >= 100 and served and refused  # the race did run, both ways


@pytest.mark.anyio
async def test_the_index_reads_no_file_a_symlink_swapped_in_points_to(store: Store, tmp_path: Path) -> None:
    swapper = Swapper(store.docs, outside_secret(tmp_path))
    root = str(store.docs.resolve())
    leaks = reads = 0
    swapper.start()
    try:
        deadline = time.monotonic() + 5
        while reads < 5000 and time.monotonic() < deadline:
            reads += 1
            read = read_inside(root, "race.md", 1 << 20)
            leaks += read is not None and SECRET.encode() in read[1]
    finally:
        swapper.stop.set()
        swapper.join()
    assert leaks == 0 and reads


@pytest.mark.anyio
async def test_links_that_stay_inside_are_served_and_others_are_not(store: Store, tmp_path: Path) -> None:
    secret = outside_secret(tmp_path)
    (store.docs / "leak.md").symlink_to(secret)
    (store.docs / "leakdir").symlink_to(secret.parent, target_is_directory=True)
    (store.docs / "alias.md").symlink_to(store.docs / "notes.txt")  # stays inside: served
    (store.docs / "policies-link").symlink_to(store.docs / "policies", target_is_directory=True)  # not descended
    os.mkfifo(store.docs / "fifo.md")  # opened without blocking, refused
    async with Client(server_for("member", services=store.services, user="alice")) as client:
        alias = (await client.read_resource("truloop://docs/alias.md")).contents[0]
        for uri in ("leak.md", "leakdir/secret.md", "policies-link/expenses.md", "fifo.md"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(f"truloop://docs/{uri}")
            assert caught.value.error.code == types.INVALID_PARAMS
    assert alias.text == (store.docs / "notes.txt").read_text(encoding="utf-8")  # type: ignore[union-attr]
    from toolsets.infra.text import Analyzer

    prepared, vanished = prepare_batch(store.docs.resolve(), ["alias.md", "leak.md", "fifo.md"], {}, Analyzer())
    assert [item.path for item in prepared] == ["alias.md"] and sorted(vanished) == ["fifo.md", "leak.md"]
