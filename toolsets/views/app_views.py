"""MCP Apps: the `ui://` resources a host that renders apps shows in place of a tool's text (docs/hosts.md).

Each app is one self-contained HTML document, made from the plain files of `toolsets/views/apps/`: its own
template, with the shared style and script inlined where the template says (`/*truloop:shared.css*/`,
`/*truloop:shared.js*/`). No toolchain builds them; no app loads anything from the network. Which tool shows which
app is declared where the tools are composed (`toolsets.profiles.app_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

APP_MIME_TYPE = "text/html;profile=mcp-app"
APPS_DIR = Path(__file__).resolve().parent / "apps"
MAX_APP_BYTES = 60 * 1024  # what a host loads into an iframe for one tool call


@dataclass(frozen=True, slots=True)
class App:
    name: str  # the template's file name without .html
    title: str
    description: str

    @property
    def uri(self) -> str:
        return f"ui://truloop/{self.name}.html"


AVAILABILITY = App(
    "availability",
    "Availability / 가능한 날짜",
    "Pick the days you can make for an event you are invited to; shows what you submitted.",
)
EVENT = App("event", "Event / 일정", "An event: its time in your time zone, place, invitees and their answers.")
CONFIRM = App(
    "confirm",
    "Confirmation / 확인",
    "A change that waits for your yes: what it changes, and what became of it.",
)
APPS = (AVAILABILITY, EVENT, CONFIRM)


class AppCatalog:
    """The apps' HTML, made once per catalog from the files (they do not change while a server runs)."""

    def __init__(self, folder: Path = APPS_DIR) -> None:
        self._folder = folder

    @cached_property
    def _shared(self) -> tuple[str, str]:
        return (self._folder / "shared.css").read_text("utf-8"), (self._folder / "shared.js").read_text("utf-8")

    def html(self, app: App) -> str:
        css, script = self._shared
        template = (self._folder / f"{app.name}.html").read_text("utf-8")
        return template.replace("/*truloop:shared.css*/", css).replace("/*truloop:shared.js*/", script)

    @cached_property
    def documents(self) -> dict[str, str]:
        """Every app's HTML by its URI (each checked against `MAX_APP_BYTES`)."""
        made = {}
        for app in APPS:
            text = self.html(app)
            size = len(text.encode("utf-8"))
            if size > MAX_APP_BYTES:
                raise ValueError(f"the {app.name} app is {size:,} bytes; an app is at most {MAX_APP_BYTES:,}")
            made[app.uri] = text
        return made

    def find(self, uri: str) -> App | None:
        return next((app for app in APPS if app.uri == uri), None)
