"""Memories' pure pieces, the same on every backend: a new memory, its search terms and its owner's
key, and a row as a record."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolsets.infra.clock import now_iso
from toolsets.infra.store.memories.contract import MemoryRecord
from toolsets.infra.text import Analyzer

if TYPE_CHECKING:
    import sqlite3

REANALYZE_BATCH = 2000  # rows re-analyzed per transaction after an analyzer change


def new_memory(content: str, tags: list[str]) -> MemoryRecord:
    """A memory about to be saved: a fresh id, stamped now."""
    return MemoryRecord(id=f"mem_{uuid.uuid4().hex}", content=content, tags=list(tags), created_at=now_iso())


def owner_key(user_id: str) -> str:
    """The prefix of a user's terms in the FTS index (letters and digits only, fixed length). Two users
    sharing one (a hash collision) would only share statistics: results are always filtered by user id."""
    return "u" + hashlib.blake2b(user_id.encode(), digest_size=6).hexdigest()


def memory_terms(text: Analyzer, content: str, tags: list[str]) -> tuple[str, str]:
    """The term strings indexed for a memory: its content's and its tags'."""
    return text.term_string(content), text.term_string(" ".join(tags))


def memory_record(row: sqlite3.Row | Mapping[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"], content=row["content"], tags=json.loads(row["tags"]), created_at=row["created_at"]
    )
