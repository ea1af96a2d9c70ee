"""MCP content blocks a tool, a resource or a prompt may answer with, checked at the boundary (plugins send them).

The shapes are MCP's (camelCase on the wire): `text`, `image` and `audio` (base64 `data` and a `mimeType`),
`resource` (an embedded resource: `uri` and `text` or base64 `blob`) and `resource_link`. Each may carry
`annotations` and `_meta`. A tool whose result is `ContentBlocks` answers with exactly those blocks.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

MAX_BLOCKS = 256
MIME = r"^[\w.+-]+/[\w.+-]+(;.{0,100})?$"


def checked_base64(value: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be base64 (RFC 4648, with padding)") from None
    return value


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextBlock(_Block):
    type: Literal["text"]
    text: str


class _MediaBlock(_Block):
    """Base64 `data` of a `mimeType`."""

    data: str
    mime_type: str = Field(alias="mimeType", pattern=MIME)

    @field_validator("data")
    @classmethod
    def _base64(cls, value: str) -> str:
        return checked_base64(value)


class ImageBlock(_MediaBlock):
    type: Literal["image"]


class AudioBlock(_MediaBlock):
    type: Literal["audio"]


class ResourceContents(BaseModel):
    """One resource's contents: text or base64 binary."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    uri: str = Field(min_length=1, max_length=2048)
    mime_type: str | None = Field(default=None, alias="mimeType", pattern=MIME)
    text: str | None = None
    blob: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @model_validator(mode="after")
    def _text_or_blob(self) -> ResourceContents:
        if (self.text is None) == (self.blob is None):
            raise ValueError("give exactly one of text and blob (base64)")
        if self.blob is not None:
            checked_base64(self.blob)
        return self


class EmbeddedResourceBlock(_Block):
    type: Literal["resource"]
    resource: ResourceContents


class ResourceLinkBlock(_Block):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["resource_link"]
    uri: str = Field(min_length=1, max_length=2048)
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType", pattern=MIME)
    size: int | None = None


ContentBlock = Annotated[
    TextBlock | ImageBlock | AudioBlock | EmbeddedResourceBlock | ResourceLinkBlock, Field(discriminator="type")
]


class ContentBlocks(RootModel[list[ContentBlock]]):
    """A result given as MCP content blocks (sent as they are, with no structured content)."""

    root: list[ContentBlock] = Field(max_length=MAX_BLOCKS)

    def wire(self) -> list[dict[str, Any]]:
        return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in self.root]

    def text(self) -> str:
        """What a reader of text alone gets: the text blocks, and a line for each other block."""
        lines: list[str] = []
        for block in self.root:
            if isinstance(block, TextBlock):
                lines.append(block.text)
            elif isinstance(block, EmbeddedResourceBlock):
                lines.append(block.resource.text if block.resource.text is not None else f"[{block.resource.uri}]")
            elif isinstance(block, ResourceLinkBlock):
                lines.append(f"[{block.name}]({block.uri})")
            else:
                lines.append(f"[{block.type} {block.mime_type}]")
        return "\n".join(lines)


def content_of(value: Any) -> ContentBlocks:
    """`value` (a block, or a list of them, as plain JSON data) checked as content; ValueError says why not."""
    from pydantic import ValidationError

    from toolsets.core.problems import describe

    blocks = value if isinstance(value, list) else [value]
    try:
        return ContentBlocks.model_validate(blocks)
    except ValidationError as exc:
        raise ValueError(describe(exc, whole="content", limit=3)) from None
