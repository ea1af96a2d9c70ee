"""Long-term memories' contract: a memory, a search hit, and the operations the memory tools use.

`sqlite.SqliteMemories` (the embedded store), `postgres.PgMemories` (the shared store) and the
Supermemory client (`toolsets.infra.upstream.supermemory`) fulfil `MemoryStore`; the deployment picks
one (`toolsets.services`).
"""

from typing import Protocol

from pydantic import BaseModel, Field


class MemoryRecord(BaseModel):
    id: str = Field(description="The memory's id; pass it to forget_memory to delete the memory")
    content: str = Field(description="What was remembered, as saved")
    # a lambda, not `list`: pydantic reads a factory's signature, and reading a builtin's costs ~10 ms at start
    tags: list[str] = Field(default_factory=lambda: [], description="Labels given when the memory was saved")
    created_at: str = Field(description="When the memory was saved, ISO 8601 with UTC offset")


class MemoryHit(BaseModel):
    record: MemoryRecord = Field(description="The matching memory")
    score: float = Field(
        description="Relevance to the query; higher is more relevant (only comparable within one search)"
    )


class MemoryStore(Protocol):
    """One user's long-term memories: every read and write is scoped to that user."""

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord: ...

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        """The user's memories that match `query`, most relevant first."""
        ...

    async def exists(self, user_id: str, memory_id: str) -> bool | None:
        """Whether the user has this memory; None when the backend cannot tell without deleting it."""
        ...

    async def text_of(self, user_id: str, memory_id: str) -> str | None:
        """What the user's memory says (for the question that confirms forgetting it); None when there is no such
        memory or the backend cannot tell without more than a look-up."""
        ...

    async def forget(self, user_id: str, memory_id: str) -> bool:
        """True when the user's memory was deleted; False when the user has no memory with that id."""
        ...
