"""The deployment's audit log, from the settings: a file (rotated), a standard stream, or none."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import SecretStr

from server.settings import Settings

if TYPE_CHECKING:
    from toolsets.pipeline.audit.writer import AuditLog


def open_audit_log(settings: Settings) -> AuditLog | None:
    """The writer (created at once; `Services.open_audit` defers this call to the first audit line)."""
    from toolsets.pipeline.audit.writer import AuditLog, stderr_or_stdout

    target = settings.audit_target
    if target == "off":
        return None
    secrets = list(known_secrets(settings))
    if target == "-":
        return AuditLog(None, stream=stderr_or_stdout(settings.transport == "stdio"), known_secrets=secrets)
    return AuditLog(target, max_bytes=settings.audit_max_bytes, keep=settings.audit_keep, known_secrets=secrets)


def known_secrets(settings: Settings) -> Iterator[str]:
    """Every secret the settings hold (and the password inside a secret URL), so none reaches an audit line."""
    for name in Settings.model_fields:
        value = getattr(settings, name)
        for secret in value if isinstance(value, tuple) else (value,):
            if isinstance(secret, SecretStr) and secret.get_secret_value():
                plain = secret.get_secret_value()
                yield plain
                if "://" in plain:
                    password = urlsplit(plain).password
                    if password:
                        yield password


def audit_health(log: object) -> dict[str, object]:
    """The /healthz fields: `audit` ok | degraded (lines dropped in the last minute) | off, and the drop count."""
    from toolsets.pipeline.audit.writer import AuditLog

    if not isinstance(log, AuditLog):
        return {"audit": "off"}
    report: dict[str, object] = {"audit": log.health(), "audit_dropped": log.dropped}
    if report["audit"] == "degraded":
        report["status"] = "degraded"
    return report
