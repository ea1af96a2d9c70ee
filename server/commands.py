"""Operator subcommands: `truloop-mcp users import FILE`, `truloop-mcp notion sync`."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from server.cli import PROG, OneLineParser
from server.settings import default_data_dir

COMMANDS = ("users", "notion")


class CommandError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Operator commands.")
    sub = parser.add_subparsers(dest="group", required=True)
    users = sub.add_parser("users", help="the user directory").add_subparsers(dest="action", required=True)
    imp = users.add_parser("import", help="import users from a JSON list or a CSV file with a header")
    imp.add_argument("file", help="JSON list of objects, or CSV with id,username,display_name,phone,email,groups,role")
    notion = sub.add_parser("notion", help="the Notion mirror").add_subparsers(dest="action", required=True)
    notion.add_parser("sync", help="copy the pages shared with NOTION_TOKEN's integration into <docs>/notion/")
    for action in (imp, *notion.choices.values()):
        action.add_argument("--data-dir", default=os.environ.get("TRULOOP_DATA_DIR"), help="embedded store")
        action.add_argument("--docs", dest="docs_dir", default=os.environ.get("TRULOOP_DOCS_DIR"), help="docs folder")
    return parser


def read_users(path: Path) -> list[Any]:
    from toolsets.store.users import UserRecord

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
            first = exc.errors(include_url=False)[0]
            field = ".".join(str(part) for part in first["loc"])
            raise CommandError(f"{path}: record {number}: {field}: {first['msg']}") from None
        if user.id in seen:
            raise CommandError(f"{path}: record {number}: id {user.id!r} appears twice")
        seen.add(user.id)
        users.append(user)
    return users


def _services(args: argparse.Namespace) -> Any:
    from toolsets.services import Services

    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    docs_dir = Path(args.docs_dir) if args.docs_dir else data_dir / "docs"
    return Services(data_dir=data_dir, docs_dir=docs_dir)


def run(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    try:
        if args.group == "users":
            users = read_users(Path(args.file))
            services = _services(args)
            import sqlite3

            try:
                count = services.users.import_users_sync(users)
            except sqlite3.IntegrityError as exc:
                raise CommandError(f"nothing imported: {exc} (a username is already taken by another id?)") from None
            print(f"imported {count} users into {services.db.path}")
        else:
            token = os.environ.get("NOTION_TOKEN", "").strip()
            if not token:
                raise CommandError("set NOTION_TOKEN to a Notion integration secret to sync pages")
            import anyio

            from toolsets.upstream.notion import sync_notion

            services = _services(args)
            stats = anyio.run(lambda: sync_notion(services, token=token, report=lambda line: print(line)))
            print(f"notion sync: {stats}")
    except CommandError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(2) from None
    except Exception as exc:  # an upstream or store failure: one line, no traceback
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(1) from None
