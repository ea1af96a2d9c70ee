"""One server entry set or removed in a host's file, whatever its form: plain JSON (server/cli/config_file.py),
JSON with comments (Zed, Gemini CLI: the text is edited, so comments, order and layout stay), or TOML (Codex:
server/cli/toml_config.py). Each returns a `Change` that `config_file.write` writes; an edit that would not read
back as exactly the intended change is refused with nothing written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from server.cli import config_file
from server.cli.config_file import Change, ConfigFileError, read_text
from server.cli.hosts import Form


def with_server(form: Form, file: Path, key: str, name: str, entry: dict[str, Any]) -> Change:
    if form == "toml":
        from server.cli import toml_config

        return toml_config.with_server(file, key, name, entry)
    if form == "jsonc":
        return _jsonc_edit(file, key, name, entry)
    return config_file.with_server(file, key, name, entry)


def without_server(form: Form, file: Path, key: str, name: str) -> Change:
    if form == "toml":
        from server.cli import toml_config

        return toml_config.without_server(file, key, name)
    if form == "jsonc":
        return _jsonc_edit(file, key, name, None)
    return config_file.without_server(file, key, name)


def snippet(form: Form, key: str, name: str, entry: dict[str, Any]) -> str:
    """The entry as it goes in the file, for `install --print`."""
    if form == "toml":
        from server.cli import toml_config

        return toml_config.snippet(key, name, entry)
    return json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


def _jsonc_edit(file: Path, key: str, name: str, entry: dict[str, Any] | None) -> Change:
    """Set `key.name` to `entry` (None: remove it) in the text of a JSON-with-comments file."""
    from server.cli.jsonc_text import JsoncError, parse, remove_member, set_member

    text = read_text(file)
    if text is None or not text.strip():
        return Change(file, None if text is None else {}, {key: {name: entry}} if entry is not None else {})
    try:
        before = parse(text).value
    except JsoncError as exc:
        raise ConfigFileError(
            f"{file} cannot be read as JSON with comments ({exc}); nothing was changed. Fix the file, or move it "
            "away and run this again"
        ) from None
    if not isinstance(before, dict):
        raise ConfigFileError(f"{file} holds a JSON {type(before).__name__}, not an object; nothing was changed")
    if before.get(key) is not None and not isinstance(before[key], dict):
        raise ConfigFileError(f"{file}: its {key!r} is not an object; nothing was changed")
    expected = copy.deepcopy(before)
    if entry is None:
        if isinstance(expected.get(key), dict):
            expected[key].pop(name, None)
        new = remove_member(text, (key, name))
    else:
        expected.setdefault(key, {})[name] = entry
        new = set_member(text, (key, name), entry)
    try:
        after = parse(new).value
    except JsoncError:
        after = None
    if after != expected:
        raise ConfigFileError(f"{file}: the entry could not be edited safely in its text; nothing was changed")
    return Change(file, before, after, text=new)
