"""A FIFO (or another non-regular file) in the docs folder never blocks indexing or search."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from mcp import Client

from tests.support import MODES, server_for, services_for
from toolsets.infra.store.knowledge import prepare_batch
from toolsets.infra.text import analyzer


def test_a_fifo_swapped_in_after_the_scan_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "notes.md")  # what the scan saw as a file is now a FIFO with no writer
    outcome: list[object] = []
    worker = threading.Thread(
        target=lambda: outcome.append(prepare_batch(tmp_path, ["notes.md"], {}, analyzer())), daemon=True
    )
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "open() blocked on the FIFO"
    prepared, vanished = outcome[0]  # type: ignore[misc]
    assert prepared == [] and vanished == ["notes.md"]


@pytest.mark.anyio
@MODES
async def test_search_works_with_a_fifo_in_the_docs_folder(tmp_path: Path, mode: str) -> None:
    services = services_for(tmp_path)
    docs = services.docs_dir
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text("# Office guide\n\nThe meeting room is on the third floor.\n")
    os.mkfifo(docs / "trap.md")
    async with Client(server_for(services=services), mode=mode) as client:
        result = await client.call_tool("search_knowledge_base", {"query": "meeting room", "limit": 3})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert [hit["title"] for hit in result.structured_content["hits"]] == ["Office guide"]
