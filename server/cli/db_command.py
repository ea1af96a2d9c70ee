"""`truloop-mcp db migrate|status|copy`: the store's schema and contents (what each does: db_actions.py)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from server.cli.operator_commands import STORE_SETTINGS, operator_parser, parse, reporting_failures, store_services
from server.cli.shared import add_setting_flags


def _parser() -> argparse.ArgumentParser:
    parser, db = operator_parser("db", help="the store's schema and contents")
    migrate = db.add_parser(
        "migrate", help="bring every component's schema up to date (PostgreSQL with --database-url)"
    )
    status = db.add_parser("status", help="each component's schema version and row counts")
    copy = db.add_parser("copy", help="copy an embedded SQLite store into an empty PostgreSQL database, checked")
    copy.add_argument("--from", dest="source", required=True, metavar="sqlite:PATH", help="the embedded store file")
    copy.add_argument("--to", dest="target", required=True, metavar="postgresql://...", help="the shared database")
    for action in (migrate, status):
        add_setting_flags(action, only=STORE_SETTINGS)
    return parser


def run(argv: Sequence[str]) -> None:
    args, settings = parse(_parser(), "db", argv)

    def act() -> None:
        import anyio

        from server.cli import db_actions

        if args.action == "copy":
            db_actions.copy(args.source, args.target)
        else:
            anyio.run(db_actions.migrate if args.action == "migrate" else db_actions.status, store_services(settings))

    reporting_failures(act)
