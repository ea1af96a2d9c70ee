"""Runtime settings: command-line flags over environment variables over defaults (DESIGN section 3)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolsets.context import ConfirmPolicy
from toolsets.profiles import PROFILE_NAMES

Transport = Literal["stdio", "sse", "http"]
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "truloop"


def local_timezone() -> str:
    """The machine's IANA zone (TZ, then /etc/localtime), else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if (tz and "/" in tz) or tz == "UTC":
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
        marker = "zoneinfo/"
        if marker in target:
            return target.split(marker, 1)[1]
    except OSError:
        pass
    return "UTC"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_secret(name: str, value: str) -> None:
    if len(value.encode()) < 32:
        raise ValueError(f"{name} must be at least 32 bytes (HS256 needs a key as long as its hash)")
    if len(set(value)) < 5 or any(value == value[:n] * (len(value) // n) for n in range(1, 5) if len(value) % n == 0):
        raise ValueError(
            f"{name} is too easy to guess (a repeated pattern); generate one with: "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'"
        )


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    profile: str = "member"
    user: str = Field(default="local", min_length=1, max_length=200)
    timezone: str = Field(default_factory=local_timezone)
    data_dir: Path = Field(default_factory=default_data_dir)
    docs_dir: Path | None = None
    redis_url: str | None = Field(default=None, repr=False)
    redis_prefix: str = Field(default="truloop:", min_length=1, max_length=100)
    deferred_timeout: float = Field(default=300.0, gt=0, le=3600)
    demo: bool = False
    jwt_secret: str | None = Field(default=None, repr=False)
    jwt_issuer: str | None = None
    state_keys: tuple[str, ...] = Field(default=(), repr=False)
    confirm: ConfirmPolicy = ConfirmPolicy.AUTO
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    max_sessions_per_user: int = Field(default=64, ge=1, le=10_000)
    max_device_streams_per_user: int = Field(default=8, ge=1, le=1_000)
    max_line_bytes: int = Field(default=16 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILE_NAMES:
            raise ValueError(f"unknown profile {value!r}; choose one of {', '.join(PROFILE_NAMES)}")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from toolsets.errors import ToolInputError
        from toolsets.validation import parse_timezone

        try:
            parse_timezone(value)
        except ToolInputError as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("jwt_secret")
    @classmethod
    def _strong_secret(cls, value: str | None) -> str | None:
        if value is not None:
            _check_secret("the secret", value)
        return value or None

    @field_validator("state_keys")
    @classmethod
    def _strong_keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for key in value:
            _check_secret("every entry", key)
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a URL such as redis://127.0.0.1:6379/0 (or rediss://..., unix:///run/redis.sock)")
        return value or None

    @field_validator("data_dir", "docs_dir")
    @classmethod
    def _a_folder(cls, value: Path | None) -> Path | None:
        if value is None:
            return value
        example = "pass a folder such as ~/.local/share/truloop"
        existing = value
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{str(existing)!r} is a file, not a folder; {example}")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"{str(existing)!r} is not writable by this user; {example}")
        return value

    @model_validator(mode="after")
    def _safe_binding(self) -> Settings:
        if self.transport != "stdio" and not self.jwt_secret and not is_loopback(self.host):
            raise ValueError(
                f"refusing to serve {self.host} without authentication: set TRULOOP_JWT_SECRET, "
                "or bind a loopback address such as 127.0.0.1"
            )
        return self

    @property
    def resolved_docs_dir(self) -> Path:
        return self.docs_dir or self.data_dir / "docs"

    @property
    def auth_enabled(self) -> bool:
        return self.jwt_secret is not None
