"""A host's JSON configuration file, edited in place: one server entry added, replaced or removed, everything
else in the file kept as it was, the previous file kept as `FILE.bak`, the new one written atomically.

A file that is not a JSON object (or whose server list is not an object) is refused with `ConfigFileError`
and left untouched: comments (which VS Code allows in its mcp.json) would be lost by rewriting it. Files with
comments that a host documents (Zed, Gemini CLI) and TOML files (Codex) are edited as text by
server/cli/config_forms.py, which writes through `write` here too.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ConfigFileError(Exception):
    """The file cannot be edited safely; nothing was written."""


@dataclass(frozen=True, slots=True)
class Change:
    file: Path
    before: dict[str, Any] | None  # None: the file did not exist
    after: dict[str, Any]
    text: str | None = None  # the new file's text, when it is not `after` as JSON (an edit of the text)

    @property
    def changed(self) -> bool:
        if self.before is None and not self.after:
            return False  # no file, and nothing to put in one (uninstall from a file that is not there)
        return self.before != self.after

    @property
    def backup(self) -> Path:
        return self.file.with_name(self.file.name + ".bak")


def read_text(file: Path) -> str | None:
    """The file's text (None when there is no file)."""
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ConfigFileError(f"{file} is not UTF-8 text; nothing was changed") from None
    except OSError as exc:
        raise ConfigFileError(f"{file}: cannot be read: {exc.strerror or exc}") from None


def read_config(file: Path, key: str) -> dict[str, Any] | None:
    """The file's object (None when there is no file); an empty file reads as `{}`."""
    text = read_text(file)
    if text is None:
        return None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            f"{file} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); nothing was changed. "
            "Fix the file, or move it away and run this again; comments and trailing commas are not plain JSON"
        ) from None
    if not isinstance(value, dict):
        raise ConfigFileError(f"{file} holds a JSON {type(value).__name__}, not an object; nothing was changed")
    servers = value.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError(f"{file}: its {key!r} is not an object; nothing was changed")
    return value


def with_server(file: Path, key: str, name: str, entry: dict[str, Any]) -> Change:
    """The file with `name` set to `entry` in its `key` object (other servers and keys as they were)."""
    before = read_config(file, key)
    after = json.loads(json.dumps(before)) if before is not None else {}
    servers = after.setdefault(key, {})
    servers[name] = entry
    return Change(file, before, after)


def without_server(file: Path, key: str, name: str) -> Change:
    before = read_config(file, key)
    after = json.loads(json.dumps(before)) if before is not None else {}
    servers = after.get(key)
    if isinstance(servers, dict):
        servers.pop(name, None)
    return Change(file, before, after if before is not None else {})


def write(change: Change, *, new_mode: int = 0o644) -> Path | None:
    """Write the change (a no-op when nothing changed); returns the backup made of the previous file, if any.
    A new file gets `new_mode`; an existing one keeps its permissions."""
    if not change.changed:
        return None
    file = change.file
    file.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = new_mode
    if change.before is not None:
        backup = change.backup
        data = file.read_bytes()
        mode = file.stat().st_mode & 0o7777
        _atomic_write(backup, data, mode)
    text = change.text if change.text is not None else json.dumps(change.after, indent=2, ensure_ascii=False) + "\n"
    _atomic_write(file, text.encode(), mode)
    return backup


def _atomic_write(file: Path, data: bytes, mode: int) -> None:
    """Write beside the file, then rename over it: a reader (or a crash) never sees half a file. The new file
    keeps the old one's permissions (`~/.claude.json` is private)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
