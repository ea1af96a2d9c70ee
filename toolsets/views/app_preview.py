"""Standalone preview pages of the MCP Apps (`truloop-mcp apps preview`): each app, as the server serves it, inside
a stub host page (`apps/preview_host.html`) that hands it sample data (`app_samples`) in the theme and locale asked
for. A page needs nothing but a browser: no server, no network."""

from __future__ import annotations

import datetime as dt
import json
from typing import Literal

from toolsets.views.app_samples import samples
from toolsets.views.app_views import APPS, APPS_DIR, App, AppCatalog

Locale = Literal["ko", "en"]
Theme = Literal["light", "dark"]
LOCALES: dict[Locale, str] = {"ko": "ko-KR", "en": "en-US"}
THEMES: tuple[Theme, ...] = ("light", "dark")
HOST_PAGE = APPS_DIR / "preview_host.html"
PLACEHOLDER = "/*truloop:preview*/"


def app_named(name: str) -> App:
    found = next((app for app in APPS if app.name == name), None)
    if found is None:
        raise KeyError(name)
    return found


def preview_name(app: App, locale: Locale, theme: Theme) -> str:
    return f"{app.name}-{locale}-{theme}.html"


def preview_page(catalog: AppCatalog, app: App, locale: Locale, theme: Theme, today: dt.date) -> str:
    """One app's preview page in `locale` and `theme`, with the sample data of `today`."""
    sample = samples(today)[app.name]
    context = {
        "theme": theme,
        "locale": LOCALES[locale],
        "displayMode": "inline",
        "toolInfo": {"tool": {"name": sample.tool}},
    }
    preview = {
        "app": app.name,
        "tool": sample.tool,
        "html": catalog.documents[app.uri],
        "context": context,
        "arguments": sample.arguments,
        "result": sample.result,
        "answer": sample.answer,
    }
    # inside <script>: no `</` may close it early (JSON allows `<\/` for `</`)
    data = json.dumps(preview, ensure_ascii=False).replace("</", "<\\/")
    return HOST_PAGE.read_text("utf-8").replace(PLACEHOLDER, f"const PREVIEW = {data};", 1)


def index_page(names: list[str]) -> str:
    links = "\n".join(f'<li><a href="{name}">{name}</a></li>' for name in names)
    return (
        '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>truloop app previews</title></head>\n'
        f"<body>\n<h1>truloop app previews</h1>\n<ul>\n{links}\n</ul>\n</body>\n</html>\n"
    )
