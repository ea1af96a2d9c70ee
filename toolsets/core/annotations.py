"""MCP-neutral tool hints; the MCP front publishes them as `ToolAnnotations`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolHints:
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False

    def __post_init__(self) -> None:
        if self.read_only and self.destructive:
            raise ValueError("a read-only tool cannot be destructive")


READ_ONLY = ToolHints(read_only=True, idempotent=True)
READ_ONLY_OPEN_WORLD = ToolHints(read_only=True, idempotent=True, open_world=True)
WRITE = ToolHints()
WRITE_IDEMPOTENT = ToolHints(idempotent=True)
DESTRUCTIVE = ToolHints(destructive=True, idempotent=True)
