"""A plugin file as read once: its path, its text and its content hash (the version's identity)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

MAX_SOURCE_BYTES = 1024 * 1024  # a plugin is a small file; anything larger is a mistake, not a tool
VERSION_CHARS = 12  # the version shown and audited: the start of the SHA-256 of the file's bytes


class PluginSourceError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class PluginSource:
    path: Path
    text: str
    digest: str  # SHA-256 of the bytes, hex

    @property
    def version(self) -> str:
        return self.digest[:VERSION_CHARS]

    @staticmethod
    def version_of(data: bytes) -> str:
        """The version of a file holding `data`, as `from_bytes(...).version` would give it."""
        return hashlib.sha256(data).hexdigest()[:VERSION_CHARS]

    @classmethod
    def from_bytes(cls, path: Path, data: bytes) -> PluginSource:
        if len(data) > MAX_SOURCE_BYTES:
            raise PluginSourceError(f"the file is larger than {MAX_SOURCE_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PluginSourceError(f"the file is not UTF-8 (byte {exc.start})") from None
        return cls(path, text, hashlib.sha256(data).hexdigest())

    @classmethod
    def read(cls, path: Path) -> PluginSource:
        try:
            with path.open("rb") as file:
                data = file.read(MAX_SOURCE_BYTES + 1)
        except OSError as exc:
            raise PluginSourceError(f"cannot read the file: {exc.strerror or exc}") from None
        return cls.from_bytes(path, data)
