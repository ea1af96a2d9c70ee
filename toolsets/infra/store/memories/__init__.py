"""Long-term memories per user: the contract (`MemoryStore` and its records) here; `sqlite` and
`postgres` fulfil it, `shared` holds what both compute the same way."""

from toolsets.infra.store.memories.contract import MemoryHit, MemoryRecord, MemoryStore

__all__ = ["MemoryHit", "MemoryRecord", "MemoryStore"]
