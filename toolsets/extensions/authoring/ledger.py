"""Where each authored new tool stands: `pending` (with the reason, word for word), `trial` (its successful calls
so far) or `active`. Kept in `DIR/.authoring/tools.json`, beside the files it describes, and written whole."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

TrialState = Literal["pending", "trial", "active"]
TRIAL_CALLS = 3  # successful calls a new tool makes on trial before it is active


class LedgerEntry(BaseModel):
    state: TrialState
    version: str
    successes: int = 0
    error: str | None = None
    at: float = 0.0


class Ledger:
    """Read from its file once, then kept in memory by the one process that writes it (the serving one)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ".authoring" / "tools.json"
        self._entries: dict[str, LedgerEntry] | None = None

    def read(self) -> dict[str, LedgerEntry]:
        if self._entries is None:
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                self._entries = {name: LedgerEntry.model_validate(value) for name, value in raw.items()}
            except (OSError, ValueError):
                self._entries = {}
        return dict(self._entries)

    def get(self, name: str) -> LedgerEntry | None:
        """(The call path asks this for every plugin call: no file is read once the ledger was read.)"""
        return self.read().get(name)

    def put(self, name: str, entry: LedgerEntry | None) -> None:
        entries = self.read()
        if entry is None:
            entries.pop(name, None)
        else:
            entries[name] = entry.model_copy(update={"at": time.time()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        data = {key: value.model_dump(mode="json") for key, value in sorted(entries.items())}
        temporary.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        temporary.replace(self.path)
        self._entries = entries
