"""`truloop-mcp notion sync`: copy the pages shared with NOTION_TOKEN's integration into <docs>/notion/."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from server.cli.operator_commands import STORE_SETTINGS, CommandError, operator_parser, parse, reporting_failures
from server.cli.shared import add_setting_flags


def _parser() -> argparse.ArgumentParser:
    parser, notion = operator_parser("notion", help="the Notion mirror")
    sync = notion.add_parser("sync", help="copy the pages shared with NOTION_TOKEN's integration into <docs>/notion/")
    add_setting_flags(sync, only=STORE_SETTINGS)
    return parser


def run(argv: Sequence[str]) -> None:
    _, settings = parse(_parser(), "notion", argv)

    def sync() -> None:
        token = settings.notion_token
        if token is None:
            raise CommandError("set NOTION_TOKEN to a Notion integration secret to sync pages")
        import anyio

        from toolsets.infra.upstream.notion import sync_notion

        docs = settings.resolved_docs_dir
        stats = anyio.run(lambda: sync_notion(docs, token=token, report=lambda line: print(line)))
        print(f"notion sync: {stats}")

    reporting_failures(sync)
