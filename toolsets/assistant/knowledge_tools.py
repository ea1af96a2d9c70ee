"""knowledge toolset: search the team's docs folder (Markdown, text, Notion exports) by relevance."""

from typing import Annotated

from pydantic import BaseModel, Field

from toolsets.assistant.validation import search_terms
from toolsets.core.annotations import READ_ONLY
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.toolset import Toolset
from toolsets.infra.store.errors import DocsFolderMissing
from toolsets.infra.store.knowledge import KnowledgeHit
from toolsets.services import Services

knowledge_toolset = Toolset("knowledge")


class KnowledgeSearchResult(BaseModel):
    query: str = Field(description="The query as searched")
    hits: list[KnowledgeHit] = Field(description="Matching sections, most relevant first; empty when nothing matched")
    documents_indexed: int = Field(description="How many documents the knowledge base holds (0: it is empty)")


@knowledge_toolset.tool(hints=READ_ONLY)
async def search_knowledge_base(
    ctx: ToolContext[Services],
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            description="What to look for, in plain words, e.g. 'laptop setup' or 'how to file expenses'",
        ),
    ],
    limit: Annotated[int, Field(ge=1, le=20, description="How many sections to return, 1-20")] = 5,
) -> KnowledgeSearchResult:
    """Search the team's knowledge base (internal docs, handbooks, policies, synced Notion pages).

    Use it when the user asks how something is done at their organisation, about a policy, process or
    internal guide, or refers to a document. Returns the best-matching sections, most relevant first, each
    with its document title, heading path, a snippet and the source file. Quote the source when you answer;
    if there are no hits, say the knowledge base has nothing on it rather than guessing.
    """
    search_terms(query, example="'laptop setup' or 'expense policy'")
    index = ctx.deps.knowledge
    try:
        hits = await index.search(query, limit, progress=ctx.report_progress)
    except DocsFolderMissing as missing:
        raise ToolError(
            f"The knowledge base folder {missing.folder} does not exist, so there is nothing to search. "
            "Tell the user to create it and put .md or .txt files in it, or to start the server with "
            "--docs <folder> (or set TRULOOP_DOCS_DIR) pointing at their docs.",
            code=ErrorCode.NOT_CONFIGURED,
        ) from None
    return KnowledgeSearchResult(query=query, hits=hits, documents_indexed=await index.document_count())
