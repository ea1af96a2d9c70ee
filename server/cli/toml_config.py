"""A host's TOML configuration file (Codex's `config.toml`), one `[KEY.NAME]` table set or removed with tomlkit,
which keeps the rest of the file as it was: comments, order, layout, other tables. A file that is not TOML, or
whose KEY is not a table, is refused with `ConfigFileError` and left untouched.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.items import InlineTable, Table
from tomlkit.toml_document import TOMLDocument

from server.cli.config_file import Change, ConfigFileError, read_text


def with_server(file: Path, key: str, name: str, entry: dict[str, Any]) -> Change:
    text, document = _read(file)
    before = document.unwrap() if text is not None else None
    servers = _servers(file, document, key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)  # only `[KEY.NAME]` headers, no bare `[KEY]`
        document[key] = servers
    servers[name] = _inline(entry) if isinstance(servers, InlineTable) else _table(entry)
    return _change(file, before, document)


def without_server(file: Path, key: str, name: str) -> Change:
    text, document = _read(file)
    if text is None:
        return Change(file, None, {})
    before = document.unwrap()
    servers = _servers(file, document, key)
    if servers is not None and name in servers:
        del servers[name]
        if not servers:  # ours was the only one: no empty table left behind
            del document[key]
    return _change(file, before, document)


def snippet(key: str, name: str, entry: dict[str, Any]) -> str:
    document = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    servers[name] = _table(entry)
    document[key] = servers
    return tomlkit.dumps(document)


def _read(file: Path) -> tuple[str | None, TOMLDocument]:
    text = read_text(file)
    try:
        return text, tomlkit.parse(text or "")
    except ParseError as exc:
        raise ConfigFileError(
            f"{file} is not valid TOML (line {exc.line}, column {exc.col}); nothing was changed. Fix the file, "
            "or move it away and run this again"
        ) from None


def _servers(file: Path, document: TOMLDocument, key: str) -> Table | InlineTable | None:
    servers = document.get(key)
    if servers is not None and not isinstance(servers, Table | InlineTable):
        raise ConfigFileError(f"{file}: its {key!r} is not a table; nothing was changed")
    return servers


def _table(entry: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for field, value in entry.items():
        table[field] = _inline(value) if isinstance(value, dict) else value
    table.add(tomlkit.nl())  # a blank line before whatever table follows
    return table


def _inline(values: dict[str, Any]) -> InlineTable:
    table = tomlkit.inline_table()
    table.update(values)
    return table


def _change(file: Path, before: dict[str, Any] | None, document: TOMLDocument) -> Change:
    text = tomlkit.dumps(document)
    after = document.unwrap()
    if tomllib.loads(text) != after:  # what the host will read is what was meant
        raise ConfigFileError(f"{file}: the entry could not be written safely as TOML; nothing was changed")
    return Change(file, before, after, text=text)
