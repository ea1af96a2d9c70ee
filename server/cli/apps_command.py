"""`truloop-mcp apps preview [--app NAME] [--locale ko|en] [--theme light|dark] --out DIR`: write each MCP App as a
standalone HTML page with sample data and a stub host (toolsets/views/app_preview.py), to open in any browser without
a host or a server. Every app, both languages and both themes unless narrowed; an `index.html` links them."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

from server.cli.shared import PROG, OneLineParser, fail


def build_parser() -> OneLineParser:
    from toolsets.views.app_preview import LOCALES, THEMES
    from toolsets.views.app_views import APPS

    parser = OneLineParser(prog=f"{PROG} apps", description="The MCP Apps (ui:// resources) outside a host.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="preview")
    preview = actions.add_parser(
        "preview",
        help="write each app as a standalone HTML page with sample data",
        description=(
            "Write each app as a standalone HTML page: the app as the server serves it, in a stub host that hands "
            "it sample data in the language and theme given (see docs/hosts.md, Previewing the apps)."
        ),
        error_prog=parser.prog,  # its errors read as `apps`'s
    )
    preview.add_argument("--app", choices=[app.name for app in APPS], help="one app (default: every app)")
    preview.add_argument("--locale", choices=list(LOCALES), help="one language (default: ko and en)")
    preview.add_argument("--theme", choices=list(THEMES), help="one theme (default: light and dark)")
    preview.add_argument("--out", required=True, type=Path, metavar="DIR", help="the folder to write (made if missing)")
    return parser


def run(argv: Sequence[str]) -> None:
    from toolsets.views.app_preview import LOCALES, THEMES, app_named, index_page, preview_name, preview_page
    from toolsets.views.app_views import APPS, AppCatalog

    args = build_parser().parse_args(list(argv))
    out: Path = args.out
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: a file, not a folder")
    apps = [app_named(args.app)] if args.app else list(APPS)
    locales = [args.locale] if args.locale else list(LOCALES)
    themes = [args.theme] if args.theme else list(THEMES)
    catalog = AppCatalog()
    today = dt.date.today()
    pages = {
        preview_name(app, locale, theme): preview_page(catalog, app, locale, theme, today)
        for app in apps
        for locale in locales
        for theme in themes
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in pages.items():
            (out / name).write_text(text, encoding="utf-8")
        (out / "index.html").write_text(index_page(list(pages)), encoding="utf-8")
    except OSError as exc:
        sys.stderr.write(f"{PROG}: error: cannot write the previews into {out}: {exc.strerror or exc}\n")
        raise SystemExit(1) from None
    for name in pages:
        sys.stdout.write(f"{out / name}\n")
    sys.stdout.write(f"{PROG}: wrote {len(pages)} previews; open {(out / 'index.html').resolve().as_uri()}\n")
