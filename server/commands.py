"""Operator subcommands: `truloop-mcp users import FILE`, `truloop-mcp notion sync`,
`truloop-mcp db migrate|status|copy`."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from server.cli import PROG, OneLineParser, add_setting_flags, settings_or_exit
from toolsets.core.problems import describe

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.services import Services

COMMANDS = ("users", "notion", "db")
STORE_SETTINGS = ("data_dir", "docs_dir", "database_url")  # the server's flags the subcommands take too


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
    db = sub.add_parser("db", help="the store's schema and contents").add_subparsers(dest="action", required=True)
    db.add_parser("migrate", help="bring every component's schema up to date (PostgreSQL with --database-url)")
    db.add_parser("status", help="each component's schema version and row counts")
    copy = db.add_parser("copy", help="copy an embedded SQLite store into an empty PostgreSQL database, checked")
    copy.add_argument("--from", dest="source", required=True, metavar="sqlite:PATH", help="the embedded store file")
    copy.add_argument("--to", dest="target", required=True, metavar="postgresql://...", help="the shared database")
    for action in (imp, *notion.choices.values(), db.choices["migrate"], db.choices["status"]):
        add_setting_flags(action, only=STORE_SETTINGS)
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


def _services(settings: Settings) -> Services:
    from toolsets.infra.store.backend import open_backend
    from toolsets.services import Services

    return Services(
        backend=open_backend(settings.data_dir, settings.database_url),
        data_dir=settings.data_dir,
        docs_dir=settings.resolved_docs_dir,
        keys=settings.upstream_keys,
    )


def run_db(action: str, settings: Settings, args: argparse.Namespace) -> None:
    import anyio

    from server import db_commands

    if action == "copy":
        db_commands.copy(args.source, args.target)
    else:
        anyio.run(db_commands.migrate if action == "migrate" else db_commands.status, _services(settings))


def run(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    settings = settings_or_exit({name: getattr(args, name) for name in STORE_SETTINGS if hasattr(args, name)})
    try:
        if args.group == "users":
            users = read_users(Path(args.file))
            services = _services(settings)
            from toolsets.infra.store.errors import Conflict

            try:
                count = services.users.import_users_sync(users)
            except Conflict as exc:
                raise CommandError(f"nothing imported: {exc}") from None
            print(f"imported {count} users into {services.backend.location}")
        elif args.group == "db":
            run_db(args.action, settings, args)
        else:
            token = settings.notion_token
            if token is None:
                raise CommandError("set NOTION_TOKEN to a Notion integration secret to sync pages")
            import anyio

            from toolsets.infra.upstream.notion import sync_notion

            docs = settings.resolved_docs_dir
            stats = anyio.run(lambda: sync_notion(docs, token=token, report=lambda line: print(line)))
            print(f"notion sync: {stats}")
    except CommandError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(2) from None
    except Exception as exc:  # an upstream or store failure: one line, no traceback
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        raise SystemExit(1) from None
