"""Notion -> the knowledge-base folder: every page the integration can read, as Markdown.

Meant to be called by the CLI (`truloop-mcp notion sync`), outside any tool call:

    stats = await sync_notion(docs_dir, token=settings.notion_token, report=print)

Each page becomes `<docs_dir>/notion/<Title> <32-hex page id>.md`, the naming of a Notion export, so
the knowledge index shows the title without the id and keeps the id as `page_id`. The page title is
the file's `#` heading and the page's own headings are shifted one level down beneath it, so a
section's heading path reads "Title > Heading". Only files whose content changed are rewritten
(atomically); a renamed page replaces its old file, and files of pages no longer visible to the
integration are removed. The running server picks the changes up on its next search.

Failures raise `NotionSyncError` (a `ToolError`, codes from `toolsets.infra.upstream.failures`) whose
message says what to do: 401 -> check NOTION_TOKEN; 429 (after its Retry-After), 5xx and network
failures are resent with backoff by `RetryTransport`, a bounded number of times, then
`retryable=True`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.private_files import private_dir, write_private
from toolsets.infra.upstream.failures import UpstreamService, clip, status_failure, transport_failure
from toolsets.infra.upstream.retry_policy import ATTEMPTS, RETRY_SAFE, RetryPolicy, Sleep

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

logger = logging.getLogger("truloop.notion")

NOTION_API = "https://api.notion.com/v1"
NOTION_VERSION = "2022-06-28"
PAGE_SIZE = 100
TIMEOUT_SECONDS = 30.0
# Notion allows about 3 requests a second and answers bursts with 429 + Retry-After: a sync (a batch
# job, not an interactive call) waits for it, and backs off from 5xx and network failures.
RETRY = RetryPolicy(attempts=5, base_delay=1.0, max_delay=8.0, max_retry_after=60.0)
SERVICE = UpstreamService(
    name="Notion",
    key_variable="NOTION_TOKEN",
    fix_key=(
        "Set NOTION_TOKEN to a valid internal integration secret (notion.so/my-integrations), share the pages "
        "with the integration, and run the sync again."
    ),
    retry_later="run the sync again later",
)
MAX_DEPTH = 6  # nesting of block children followed
FOLDER = "notion"
MAX_NAME_BYTES = 180

_HEX_ID = re.compile(r"^[0-9a-f]{32}$")
_SYNCED_FILE = re.compile(r"^.*\S\s+(?P<id>[0-9a-f]{32})\.md$")
_UNSAFE_IN_NAME = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


class NotionSyncError(ToolError):
    """A failed sync; `status` is Notion's HTTP status when it answered one."""

    def __init__(
        self, message: str, *, code: ErrorCode | str, retryable: bool | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, code=code, retryable=retryable)
        self.status = status

    @classmethod
    def of(cls, error: ToolError, status: int | None = None) -> NotionSyncError:
        return cls(error.message, code=error.code, retryable=error.retryable, status=status)


@dataclass
class NotionSyncStats:
    pages_found: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    pages_skipped: int = 0  # archived, or not readable by the integration
    files_removed: int = 0
    requests: int = 0


async def sync_notion(
    docs_dir: Path,
    *,
    token: SecretStr | None,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Sleep | None = None,
    report: Callable[[str], None] | None = None,
) -> NotionSyncStats:
    """Mirror the Notion pages shared with the integration into `<docs_dir>/notion/`.

    `transport` replaces the network (tests pass httpx.MockTransport); `sleep` the backoff's wait.
    """
    secret = token.get_secret_value().strip() if token is not None else ""
    if not secret:
        raise NotionSyncError(
            "No Notion token: set NOTION_TOKEN to the secret of a Notion internal integration "
            "(notion.so/my-integrations) and share the pages to sync with it.",
            code=ErrorCode.NOT_CONFIGURED,
        )
    from toolsets.infra.upstream.retry import retrying_client

    say = report or (lambda message: None)
    folder = docs_dir / FOLDER
    stats = NotionSyncStats()
    headers = {
        "Authorization": f"Bearer {secret}",
        "Notion-Version": NOTION_VERSION,
        "Content-Type": "application/json",
    }
    kept: set[str] = set()
    client = retrying_client(
        transport, RETRY, sleep=sleep, timeout=TIMEOUT_SECONDS, base_url=NOTION_API, headers=headers
    )
    async with client:
        api = _NotionApi(client, stats)
        pages = await api.list_pages()
        stats.pages_found = len(pages)
        say(f"Notion: {len(pages)} page(s) shared with the integration")
        for page in pages:
            page_id = str(page.get("id", "")).replace("-", "").lower()
            title = page_title(page)
            if not _HEX_ID.match(page_id) or page.get("archived") or page.get("in_trash"):
                stats.pages_skipped += 1
                continue
            try:
                body = await _render_children(api, page_id, depth=0)
            except NotionSyncError as exc:
                if exc.status not in (403, 404):
                    raise
                stats.pages_skipped += 1
                say(f"skipped {title!r}: the integration cannot read its content (HTTP {exc.status})")
                continue
            kept.add(page_id)
            filename = f"{safe_filename(title)} {page_id}.md"
            content = page_markdown(title, body)
            if await anyio.to_thread.run_sync(_write_if_changed, folder, filename, page_id, content):
                stats.pages_written += 1
                say(f"wrote {FOLDER}/{filename}")
            else:
                stats.pages_unchanged += 1
    stats.files_removed = await anyio.to_thread.run_sync(_remove_unlisted, folder, kept)
    say(
        f"Notion sync done: {stats.pages_written} written, {stats.pages_unchanged} unchanged, "
        f"{stats.pages_skipped} skipped, {stats.files_removed} removed"
    )
    return stats


class _NotionApi:
    def __init__(self, client: httpx.AsyncClient, stats: NotionSyncStats) -> None:
        self.client = client
        self.stats = stats

    async def list_pages(self) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            body: dict[str, Any] = {"filter": {"property": "object", "value": "page"}, "page_size": PAGE_SIZE}
            if cursor:
                body["start_cursor"] = cursor
            # a search only reads, so it may be resent like a GET
            data = await self.call("POST", "/search", "list the shared pages", json=body, extensions={RETRY_SAFE: True})
            pages.extend(item for item in data.get("results", []) if item.get("object") == "page")
            cursor = data.get("next_cursor")
            if not data.get("has_more") or not cursor:
                return pages

    async def block_children(self, block_id: str) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"page_size": PAGE_SIZE}
            if cursor:
                params["start_cursor"] = cursor
            data = await self.call(
                "GET", f"/blocks/{block_id}/children", f"read the blocks of {block_id}", params=params
            )
            blocks.extend(data.get("results", []))
            cursor = data.get("next_cursor")
            if not data.get("has_more") or not cursor:
                return blocks

    async def call(self, method: str, path: str, action: str, **kwargs: Any) -> dict[str, Any]:
        import httpx

        try:
            response = await self.client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise NotionSyncError.of(transport_failure(SERVICE, exc, action=action)) from None
        self.stats.requests += int(response.extensions.get(ATTEMPTS, 1))
        status = response.status_code
        if status >= 400:
            detail = f"{_error_code(response)}: {_error_message(response)}"
            raise NotionSyncError.of(status_failure(SERVICE, status, action=action, detail=detail), status)
        return response.json()


def _error_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _error_code(response: httpx.Response) -> str:
    return str(_error_body(response).get("code") or "no error code")


def _error_message(response: httpx.Response) -> str:
    return clip(str(_error_body(response).get("message") or response.reason_phrase))


# -- pages and blocks -> Markdown -------------------------------------------------------------


def page_title(page: dict[str, Any]) -> str:
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            title = " ".join(plain_text(prop.get("title")).split())
            if title:
                return title
    return "Untitled"


def plain_text(rich_text: Any) -> str:
    return "".join(str(part.get("plain_text", "")) for part in rich_text or [] if isinstance(part, dict))


def safe_filename(title: str) -> str:
    name = " ".join(_UNSAFE_IN_NAME.sub(" ", title).split()).strip(" .")
    # file names are limited to 255 bytes; leave room for the id and suffix
    name = name.encode("utf-8")[:MAX_NAME_BYTES].decode("utf-8", errors="ignore")
    return name.rstrip(" .") or "Untitled"


def page_markdown(title: str, body: str) -> str:
    return f"# {title}\n\n{body}\n" if body else f"# {title}\n"


_HEADINGS = {"heading_1": "##", "heading_2": "###", "heading_3": "####"}
_LIST_ITEMS = {"bulleted_list_item", "numbered_list_item", "to_do", "toggle"}
_CONTAINERS = {"column_list", "column", "synced_block"}  # no text of their own: their children are the content
_LEAVES_OUT = {"child_page", "child_database"}  # separate pages, synced on their own


async def _render_children(api: _NotionApi, block_id: str, depth: int) -> str:
    """The Markdown of a block's children; list items sit on consecutive lines, other blocks apart."""
    out = ""
    previous_was_item = False
    for block in await api.block_children(block_id):
        kind = block.get("type", "")
        if kind in _LEAVES_OUT:
            continue
        children = ""
        if block.get("has_children") and depth < MAX_DEPTH:
            children = await _render_children(api, block["id"], depth + 1)
        text = _render_block(kind, block.get(kind) or {}, children)
        if not text:
            continue
        is_item = kind in _LIST_ITEMS
        if out:
            out += "\n" if is_item and previous_was_item else "\n\n"
        out += text
        previous_was_item = is_item
    return out


def _render_block(kind: str, value: dict[str, Any], children: str) -> str:
    text = plain_text(value.get("rich_text"))
    if kind in _HEADINGS:
        heading = f"{_HEADINGS[kind]} {' '.join(text.split())}" if text.strip() else ""
        return _join(heading, children)
    if kind == "paragraph":
        return _join(text, children)
    if kind in _LIST_ITEMS:
        if kind == "numbered_list_item":
            marker = "1."
        elif kind == "to_do":
            marker = "- [x]" if value.get("checked") else "- [ ]"
        else:
            marker = "-"
        indent = " " * (len(marker.split(" ")[0]) + 1)
        item = f"{marker} {_indent(text, indent).lstrip()}"
        return f"{item}\n{_indent(children, indent)}" if children else item
    if kind == "code":
        language = str(value.get("language") or "")
        language = "" if language == "plain text" else language.replace(" ", "-")
        return f"```{language}\n{text}\n```"
    if kind in ("quote", "callout"):
        icon = value.get("icon") or {}
        if kind == "callout" and icon.get("type") == "emoji":
            text = f"{icon.get('emoji', '')} {text}"
        return _quote(_join(text, children))
    if kind == "divider":
        return "---"
    if kind in _CONTAINERS:
        return children
    return ""  # unsupported block types (images, embeds, tables, ...) carry no searchable text here


def _join(text: str, children: str) -> str:
    return "\n\n".join(part for part in (text, children) if part)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n")) if text else ""


# -- files ------------------------------------------------------------------------------------


def _write_if_changed(folder: Path, filename: str, page_id: str, content: str) -> bool:
    private_dir(folder)
    target = folder / filename
    for older in folder.glob(f"* {page_id}.md"):  # the page was renamed
        if older.name != filename:
            older.unlink(missing_ok=True)
    data = content.encode("utf-8")
    try:
        if target.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    partial = folder / f".{filename}.partial"  # a dot-file: the knowledge index skips it
    write_private(partial, data)
    os.replace(partial, target)
    return True


def _remove_unlisted(folder: Path, kept: set[str]) -> int:
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.iterdir():
        synced = _SYNCED_FILE.match(path.name)
        if synced and synced["id"] not in kept and path.is_file():
            path.unlink(missing_ok=True)
            removed += 1
    return removed
