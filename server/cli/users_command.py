"""`truloop-mcp users import FILE`: import users from a JSON list or a CSV file with a header."""

from __future__ import annotations

import argparse
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from server.cli.operator_commands import (
    STORE_SETTINGS,
    CommandError,
    operator_parser,
    parse,
    reporting_failures,
    store_services,
)
from server.cli.shared import add_setting_flags
from toolsets.core.problems import describe


def _parser() -> argparse.ArgumentParser:
    parser, users = operator_parser("users", help="the user directory")
    imp = users.add_parser("import", help="import users from a JSON list or a CSV file with a header")
    imp.add_argument(
        "file",
        help="JSON list of objects, or CSV with id,username,display_name,phone,email,groups,role,timezone,locale "
        "(timezone: IANA, e.g. Asia/Seoul; locale: BCP 47, e.g. ko-KR)",
    )
    add_setting_flags(imp, only=STORE_SETTINGS)
    return parser


def read_users(path: Path) -> list[Any]:
    from toolsets.infra.store.users import UserRecord

    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    rows: list[dict[str, Any]]
    if path.suffix.lower() == ".json" or text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise CommandError(f"{path} is not valid JSON: {exc}") from None
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise CommandError(f"{path} must hold a JSON list of objects")
    else:
        rows = [
            {k.strip(): (v or "").strip() or None for k, v in row.items() if k}
            for row in csv.DictReader(io.StringIO(text))
        ]
    if not rows:
        raise CommandError(f"{path} holds no users (a JSON list of objects, or a CSV header and rows)")
    users = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        try:
            user = UserRecord.model_validate({k: v for k, v in row.items() if v is not None})
        except ValidationError as exc:
            raise CommandError(f"{path}: record {number}: {describe(exc, whole='record', limit=1)}") from None
        if user.id in seen:
            raise CommandError(f"{path}: record {number}: id {user.id!r} appears twice")
        seen.add(user.id)
        users.append(user)
    return users


def run(argv: Sequence[str]) -> None:
    args, settings = parse(_parser(), "users", argv)

    def import_users() -> None:
        users = read_users(Path(args.file))
        services = store_services(settings)
        from toolsets.infra.store.errors import Conflict

        try:
            count = services.users.import_users_sync(users)
        except Conflict as exc:
            raise CommandError(f"nothing imported: {exc}") from None
        print(f"imported {count} users into {services.backend.location}")

    reporting_failures(import_users)
