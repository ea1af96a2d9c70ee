"""Pages of `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`, with opaque cursors.

A cursor is the list it belongs to and the offset of its page, base64url-encoded; the server never keeps a
cursor, so any replica continues any list. A cursor that is not one of ours, or belongs to another list, is
refused with -32602 (Invalid params). `--page-size` sets the page size (default 500: today's hosts see one page).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 500
_VERSION = "p1"


class Pager:
    def __init__(self, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.page_size = page_size

    def offset(self, params: Mapping[str, Any] | Any, kind: str) -> int:
        """Where the page a request asks for starts (0 without a cursor); MCPError -32602 for a bogus cursor."""
        cursor = params.get("cursor") if isinstance(params, Mapping) else getattr(params, "cursor", None)
        if cursor is None:
            return 0
        if not isinstance(cursor, str):
            raise _invalid(kind)
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            version, list_kind, offset = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii").split(":")
        except (ValueError, UnicodeError, binascii.Error):
            raise _invalid(kind) from None
        if version != _VERSION or list_kind != kind or not offset.isdigit() or int(offset) <= 0:
            raise _invalid(kind)
        return int(offset)

    def page(self, items: Sequence[T], params: Mapping[str, Any] | Any, kind: str) -> tuple[list[T], str | None]:
        """The page of `items` the request asks for and the cursor of the next one (None: this is the last)."""
        start = self.offset(params, kind)
        if start > len(items):  # the list got shorter since that cursor was given: nothing more
            return [], None
        end = start + self.page_size
        return list(items[start:end]), (self.cursor(kind, end) if end < len(items) else None)

    @staticmethod
    def cursor(kind: str, offset: int) -> str:
        return base64.urlsafe_b64encode(f"{_VERSION}:{kind}:{offset}".encode()).decode("ascii").rstrip("=")


def _invalid(kind: str) -> MCPError:
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    return MCPError(
        code=INVALID_PARAMS,
        message=f"Invalid cursor for {kind}/list: pass back a nextCursor this server gave, or none for the first page",
    )
