"""memory toolset: save, search and forget the caller's long-term memories.

The backend is the embedded store, or Supermemory when SUPERMEMORY_API_KEY is set
(`Services.memories`); either way every call is scoped to the caller.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolsets.assistant.validation import search_terms
from toolsets.core.annotations import DESTRUCTIVE, READ_ONLY, WRITE
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError, ToolInputError
from toolsets.core.toolset import Toolset
from toolsets.infra.store.memories import MemoryHit, MemoryRecord
from toolsets.services import Services
from toolsets.words.catalog import caller_locale, tr
from toolsets.words.values import clip

memory_toolset = Toolset("memory")

MAX_CONTENT_CHARS = 4_000
MAX_QUERY_CHARS = 500
MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_MEMORY_ID_CHARS = 100


class SearchMemoriesResult(BaseModel):
    query: str = Field(description="The query as searched")
    count: int = Field(description="How many memories matched (at most the limit asked for)")
    memories: list[MemoryHit] = Field(description="Matching memories, most relevant first")


class ForgetMemoryResult(BaseModel):
    memory_id: str = Field(description="The id of the memory that was deleted")
    forgotten: bool = Field(description="True: the memory is gone and will not appear in searches again")


@memory_toolset.tool(hints=WRITE)
async def save_memory(
    ctx: ToolContext[Services],
    content: Annotated[
        str,
        Field(
            description=(
                f"The fact to remember, as one self-contained sentence or short note (at most {MAX_CONTENT_CHARS:,} "
                "characters), e.g. 'Prefers vegetarian restaurants near Gangnam station'."
            ),
            json_schema_extra={"maxLength": MAX_CONTENT_CHARS},
        ),
    ],
    tags: Annotated[
        list[str] | None,
        Field(
            description=(
                f"Optional labels for the memory, e.g. ['food', 'preferences'] (at most {MAX_TAGS}, "
                f"each at most {MAX_TAG_CHARS} characters). Tag words are also matched by search_memories."
            ),
        ),
    ] = None,
) -> MemoryRecord:
    """Remember a fact about the user for later conversations (a preference, a plan, a person, a detail they asked
    you to keep). Use it when the user tells you something worth recalling later or asks you to remember it; do not
    save small talk or things already saved (search_memories first when unsure). Each call saves a new memory.
    Returns the saved memory with its id."""
    text = content.strip()
    if not text:
        raise ToolInputError("content is empty: pass the fact to remember as a sentence.")
    if len(text) > MAX_CONTENT_CHARS:
        raise ToolInputError(
            f"content is {len(text):,} characters; the limit is {MAX_CONTENT_CHARS:,}. Save a shorter summary, "
            "or split it into several memories."
        )
    clean_tags = _clean_tags(tags or [])
    return await ctx.deps.memories.save(ctx.caller.user_id, text, clean_tags)


@memory_toolset.tool(hints=READ_ONLY)
async def search_memories(
    ctx: ToolContext[Services],
    query: Annotated[
        str,
        Field(
            description=(
                "Words describing what to recall, e.g. 'favorite restaurants' or 'sister birthday'. Matched "
                f"against the text and tags of the user's saved memories (at most {MAX_QUERY_CHARS} characters)."
            ),
        ),
    ],
    limit: Annotated[int, Field(ge=1, le=50, description="How many memories to return at most, 1 to 50.")] = 5,
) -> SearchMemoriesResult:
    """Search the user's saved memories, most relevant first. Use it before answering questions that depend on
    what the user told you earlier (preferences, plans, people, past decisions), and before save_memory to avoid
    saving a duplicate. Only the calling user's own memories are searched. An empty list means nothing matched."""
    text = query.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise ToolInputError(f"query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS}. Use a few key words.")
    search_terms(text, example="'favorite restaurants'")
    hits = await ctx.deps.memories.search(ctx.caller.user_id, text, limit)
    return SearchMemoriesResult(query=text, count=len(hits), memories=hits)


async def _memory_exists(ctx: ToolContext[Services], arguments: Any) -> None:
    """Before the user is asked to confirm a deletion: the memory must exist (a backend that cannot tell asks)."""
    target = str(arguments.memory_id).strip()
    if (
        target
        and len(target) <= MAX_MEMORY_ID_CHARS
        and await ctx.deps.memories.exists(ctx.caller.user_id, target) is False
    ):
        raise _not_found(target)


async def _forget_question(ctx: ToolContext[Services], values: Mapping[str, Any]) -> str:
    """The memory by its text, clipped, in the caller's language."""
    target = str(values.get("memory_id", "")).strip()
    found = None
    if target and len(target) <= MAX_MEMORY_ID_CHARS:
        found = await ctx.deps.memories.text_of(ctx.caller.user_id, target)
    locale = caller_locale(ctx.caller)
    if not found:
        return tr(locale, "Forget this memory? This cannot be undone.")
    return tr(locale, "Forget the memory '{text}'? This cannot be undone.", text=clip(found))


@memory_toolset.tool(hints=DESTRUCTIVE, precheck=_memory_exists, question=_forget_question)
async def forget_memory(
    ctx: ToolContext[Services],
    memory_id: Annotated[
        str,
        Field(description="The id of the memory to delete, as returned by search_memories or save_memory."),
    ],
) -> ForgetMemoryResult:
    """Permanently delete one of the user's saved memories. Use it when the user asks you to forget something, or
    when a saved fact is wrong or outdated (then save the corrected fact with save_memory). Find the id with
    search_memories first. This cannot be undone."""
    target = memory_id.strip()
    if not target or len(target) > MAX_MEMORY_ID_CHARS:
        raise ToolInputError("memory_id must be the id of a memory as returned by search_memories, e.g. 'mem_…'.")
    if not await ctx.deps.memories.forget(ctx.caller.user_id, target):
        raise _not_found(target)
    return ForgetMemoryResult(memory_id=target, forgotten=True)


def _not_found(memory_id: str) -> ToolError:
    return ToolError(
        f"No memory with id {memory_id!r} exists among the user's memories (it may already have been forgotten). "
        "Use search_memories to find the right id.",
        code=ErrorCode.NOT_FOUND,
    )


def _clean_tags(tags: list[str]) -> list[str]:
    cleaned: list[str] = []
    for tag in tags:
        text = " ".join(tag.split())
        if not text:
            raise ToolInputError("tags must not be empty strings: pass short labels like 'food', or omit tags.")
        if len(text) > MAX_TAG_CHARS:
            raise ToolInputError(f"tag {text[:20]!r}... is longer than {MAX_TAG_CHARS} characters: use a short label.")
        if text not in cleaned:
            cleaned.append(text)
    if len(cleaned) > MAX_TAGS:
        raise ToolInputError(f"{len(cleaned)} tags given; at most {MAX_TAGS} are allowed. Keep the most useful ones.")
    return cleaned
