"""A small toolset for dispatcher tests: read-only, destructive, failing and refusing tools."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from toolsets.core.annotations import DESTRUCTIVE, READ_ONLY
from toolsets.core.combined import CombinedToolset
from toolsets.core.errors import ToolError
from toolsets.core.toolset import Toolset
from toolsets.profiles import with_policy

sample = Toolset("sample")
DELETED: list[str] = []


class Catalog(BaseModel):
    items: list[str] = Field(description="Matching items")


class Deleted(BaseModel):
    deleted: str = Field(description="The id that was deleted")


@sample.tool(hints=READ_ONLY)
async def search_catalog(query: Annotated[str, Field(description="Words to look for", min_length=1)]) -> Catalog:
    """Search the sample catalog for items whose name contains the query."""
    return Catalog(items=[item for item in ("apple", "apricot", "banana") if query in item])


@sample.tool(hints=DESTRUCTIVE)
async def delete_item(item_id: Annotated[str, Field(description="Id of the item to delete")]) -> Deleted:
    """Delete an item for good."""
    DELETED.append(item_id)
    return Deleted(deleted=item_id)


@sample.tool(hints=READ_ONLY)
async def explode(reason: Annotated[str, Field(description="What to put in the exception")]) -> Catalog:
    """Always fails with an unexpected exception (to test the handler_error path)."""
    raise RuntimeError(f"secret database password hunter2 / {reason}")


@sample.tool(hints=READ_ONLY)
async def refuse(reason: Annotated[str, Field(description="What to say")]) -> Catalog:
    """Always refuses with a user-facing error."""
    raise ToolError(f"refused: {reason}", code="not_found", retryable=True)


CATALOG = {"test": with_policy(CombinedToolset("test", sample))}
