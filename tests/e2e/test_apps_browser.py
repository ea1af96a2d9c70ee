"""The MCP Apps in a real browser, inside the official host: Playwright drives Debian's chromium (the executable the
machine has; no browser is downloaded), whose page is a host built on `@modelcontextprotocol/ext-apps`'s `AppBridge`
(tests/apps/host/: the package pinned in package.json and package-lock.json, `npm ci` on first use, the host page
bundled with esbuild). As ext-apps' examples/basic-host does, the app runs in a sandbox proxy served from a second
origin (a second loopback port) with the spec's default CSP, which writes the app, as the real server serves it
(`resources/read`), into an inner frame. The host page forwards the app's `tools/call` to the real server over MCP.

Every test checks that no frame logged a console error or a CSP violation. Screenshots go to the test's folder, and
to $TEST_ARTIFACTS_DIR when it is set (docs/images/ holds those of the apps)."""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import fcntl
import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import SECRET, answering, child_env, mcp_client, modern_request, spawn_http_server, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

HOST_DIR = Path(__file__).resolve().parents[1] / "apps" / "host"
NODE_MODULES = HOST_DIR / "node_modules"
MARKER = NODE_MODULES / ".truloop-installed"
NPM_CACHE = HOST_DIR / ".npm-cache"
# the spec's CSP for an app that declares no domains (MCP Apps 2026-01-26, "Restrictive Default")
DEFAULT_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-dev-shm-usage", "--no-first-run"]  # fmt: skip
NEXT_YEAR = dt.date.today().year + 1
EVENT = {
    "title": "팀 워크숍 / Team workshop",
    "start": f"{NEXT_YEAR}-04-06T10:00:00+09:00",
    "end": f"{NEXT_YEAR}-04-10T18:00:00+09:00",
    "availability_deadline": f"{NEXT_YEAR}-04-01T18:00:00+09:00",
    "location": "서울 본사 3층",
}
DAYS = [f"{NEXT_YEAR}-04-{day:02d}" for day in range(6, 11)]
APPS = ("availability", "event", "confirm")
LOOKS = pytest.mark.parametrize(
    ("lang", "locale", "theme"), [("ko", "ko-KR", "light"), ("en", "en-US", "dark")], ids=["ko-light", "en-dark"]
)


def _need(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        message = f"{program} is not installed (the official-host browser tests need it; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def chromium() -> str:
    return shutil.which("chromium") or shutil.which("chromium-browser") or _need("chromium")


def _node_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in child_env().items() if not k.lower().startswith("npm_config_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               npm_config_cache=str(NPM_CACHE), npm_config_update_notifier="false", npm_config_audit="false",
               npm_config_fund="false", NO_COLOR="1")  # fmt: skip
    return env


@pytest.fixture(scope="module")
def host_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The host page, its bundle (AppBridge and the host's code, by esbuild) and the sandbox proxy. `npm ci` into
    tests/apps/host/node_modules first, unless it already matches the lockfile and this node."""
    node, npm = _need("node"), _need("npm")
    home = tmp_path_factory.mktemp("node-home")
    digest = hashlib.sha256((HOST_DIR / "package-lock.json").read_bytes())
    digest.update(subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.encode())
    NPM_CACHE.mkdir(exist_ok=True)
    with (NPM_CACHE / ".truloop-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (MARKER.is_file() and MARKER.read_text() == digest.hexdigest()):
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HOST_DIR, env=_node_env(home),
                                  capture_output=True, text=True, timeout=600)  # fmt: skip
            if done.returncode != 0:
                pytest.fail(f"npm ci failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
            MARKER.write_text(digest.hexdigest())
    bundle = tmp_path_factory.mktemp("host-bundle") / "host.bundle.js"
    built = subprocess.run(
        [str(NODE_MODULES / ".bin" / "esbuild"), "host.js", "--bundle", "--format=esm", "--target=chrome120",
         "--log-level=warning", f"--outfile={bundle}"],
        cwd=HOST_DIR, env=_node_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return {
        "/host.html": (HOST_DIR / "host.html").read_bytes(),
        "/host.bundle.js": bundle.read_bytes(),
        "/sandbox.html": (HOST_DIR / "sandbox.html").read_bytes(),
    }


class _Files(http.server.BaseHTTPRequestHandler):
    def __init__(self, *args: Any, files: dict[str, bytes], headers: dict[str, str], **kwargs: Any) -> None:
        self.files, self.extra = files, headers
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        body = self.files.get(path)
        if path == "/favicon.ico":  # (the browser asks; a host page has none)
            self.send_response(204)
            self.end_headers()
            return
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        kind = "text/javascript" if path.endswith(".js") else "text/html"
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in self.extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _serving(files: dict[str, bytes], headers: dict[str, str]) -> Iterator[str]:
    handler = functools.partial(_Files, files=files, headers=headers)
    served = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{served.server_address[1]}"
    finally:
        served.shutdown()
        served.server_close()


@pytest.fixture(scope="module")
def origins(host_files: dict[str, bytes]) -> Iterator[tuple[str, str]]:
    """(the host page's URL, the sandbox proxy's URL): two loopback ports, so two origins."""
    host = {k: v for k, v in host_files.items() if k != "/sandbox.html"}
    sandbox = {"/sandbox.html": host_files["/sandbox.html"]}
    with _serving(host, {}) as host_base, _serving(sandbox, {"Content-Security-Policy": DEFAULT_CSP}) as sandbox_base:
        yield f"{host_base}/host.html", f"{sandbox_base}/sandbox.html"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("apps-data")
    with spawn_http_server("--data-dir", str(data), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        yield base


@pytest.fixture
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    home = tmp_path_factory.mktemp("browser-home")  # chromium's crash reports and dconf: never the user's HOME
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS, env=env)
        try:
            yield launched
        finally:
            await launched.close()


async def call(base: str, bearer: str, name: str, arguments: dict[str, Any], **options: Any) -> dict[str, Any]:
    async with mcp_client(base, bearer, **options) as client:
        result = await client.call_tool(name, arguments)
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


_HTML: dict[str, str] = {}


async def app_html(base: str, bearer: str, uri: str) -> str:
    if uri not in _HTML:
        async with mcp_client(base, bearer) as client:
            read = await client.read_resource(uri)
        (contents,) = read.contents
        assert contents.mime_type == "text/html;profile=mcp-app"
        _HTML[uri] = str(contents.text)  # type: ignore[union-attr]
    return _HTML[uri]


class Hosted:
    """A page of the official host showing one app, and what its frames logged."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        self.app = page.frame_locator("#box iframe").frame_locator("iframe")  # the proxy's frame, then the app's
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))

    async def js(self, expression: str, arg: Any = None) -> Any:
        return await self.page.evaluate(expression, arg)

    async def in_app(self, expression: str) -> Any:
        return await self.app.locator("html").evaluate(expression)

    async def sizes(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = await self.js("window.seen.sizes")
        return found

    async def close(self) -> None:
        """Close the page; nothing logged an error or a CSP violation meanwhile."""
        await anyio.sleep(0.2)
        await self.page.close()
        assert self.problems == [], self.problems


async def open_app(
    browser: Any,
    origins: tuple[str, str],
    base: str,
    bearer: str,
    uri: str,
    tool_input: Any,
    result: Any,
    context: dict[str, Any],
    width: int,
    forward: Any = None,
) -> Hosted:
    """The official host at `width` px showing the app with the tool's input and result (None: not yet); the app's
    `tools/call` goes to the server through `forward` (default: the handshake-era MCP client)."""
    host_url, sandbox_url = origins
    page = await browser.new_page(viewport={"width": max(width, 640) + 40, "height": 900})
    hosted = Hosted(page)

    async def handshake_era(params: dict[str, Any]) -> dict[str, Any]:
        return await call(base, bearer, params["name"], params.get("arguments") or {})

    await page.expose_function("forwardToolCall", forward or handshake_era)
    await page.goto(host_url)
    await page.wait_for_function("typeof window.openApp === 'function'")
    html = await app_html(base, bearer, uri)
    context = {"availableDisplayModes": ["inline", "fullscreen"], "displayMode": "inline", **context}
    await hosted.js(
        "(o) => window.openApp(o)",
        {"html": html, "input": tool_input, "result": result, "hostContext": context, "sandboxUrl": sandbox_url,
         "width": width},
    )  # fmt: skip
    return hosted


async def shot(hosted: Hosted, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    await hosted.page.locator("#box iframe").screenshot(path=str(path))  # the app as the host shows it
    artifacts = os.environ.get("TEST_ARTIFACTS_DIR")
    if artifacts:
        await anyio.Path(artifacts).mkdir(parents=True, exist_ok=True)
        await anyio.to_thread.run_sync(shutil.copy, path, Path(artifacts) / path.name)


async def invited(server: str, guest: str, zone: str) -> tuple[str, str]:
    """A new event of alice's inviting `guest` (a guest token in `zone`): (the event id, the guest's bearer)."""
    bearer = token(sub=guest, role="guest", preferred_username=guest, name=guest.title(), zoneinfo=zone)
    await call(server, bearer, "list_invited_events", {})  # (the guest enters the directory)
    alice = token(sub="alice", preferred_username="alice", name="Alice Kim", zoneinfo="Asia/Seoul")
    made = await call(server, alice, "create_event", {**EVENT, "invitees": [guest]})
    assert not made.get("isError"), made
    return made["structuredContent"]["id"], bearer


@pytest.mark.parametrize(
    ("lang", "zone", "locale", "theme", "heading", "submit"),
    [
        ("ko", "Asia/Seoul", "ko-KR", "light", "가능한 날을 모두 골라 주세요", "가능한 날 저장"),
        ("en", "America/New_York", "en-US", "dark", "Pick every day you can make", "Save my days"),
    ],
)
async def test_the_availability_app_picks_and_saves_days(
    server: str, origins: Any, browser: Any, tmp_path: Path, lang: str, zone: str, locale: str, theme: str,
    heading: str, submit: str,
) -> None:  # fmt: skip
    guest = f"guest{lang}{os.getpid()}"
    event_id, bearer = await invited(server, guest, zone)
    details = await call(server, bearer, "get_event_details", {"event_id": event_id})
    assert details["structuredContent"]["your_timezone"] == zone
    hosted = await open_app(
        browser, origins, server, bearer, "ui://truloop/availability.html", {"event_id": event_id}, details,
        {"theme": theme, "locale": locale}, width=360,
    )  # fmt: skip
    app, page = hosted.app, hosted.page
    await app.get_by_text(heading).wait_for()
    slots = app.locator("button.slot")
    assert await slots.count() == len(DAYS)
    assert [await slots.nth(i).get_attribute("data-date") for i in range(len(DAYS))] == DAYS
    # the event's time in the caller's zone: 10:00 in Seoul, 21:00 the evening before in New York
    hours = await app.locator("main p").first.inner_text()
    assert ("10:00" in hours or "오전 10:00" in hours) if zone == "Asia/Seoul" else "9:00 PM" in hours, hours
    # no sideways scrolling at a phone's width
    assert await hosted.in_app("e => e.scrollWidth <= e.clientWidth")
    assert await hosted.in_app("e => e.dataset.theme") == theme
    assert await app.locator("#mode").count() == 0  # five days: no larger view asked for

    # a drag across the first three days selects them; a click on the first takes it back
    first, third = await slots.nth(0).bounding_box(), await slots.nth(2).bounding_box()  # (the page's coordinates)
    await page.mouse.move(first["x"] + 10, first["y"] + 10)
    await page.mouse.down()
    await page.mouse.move(third["x"] + 10, third["y"] + 10, steps=8)
    await page.mouse.up()
    assert [await slots.nth(i).get_attribute("aria-pressed") for i in range(3)] == ["true"] * 3
    await slots.nth(0).click()
    await slots.nth(2).click()
    await slots.nth(3).focus()
    await page.keyboard.press("Space")  # the keyboard toggles too
    pressed = [await slots.nth(i).get_attribute("aria-pressed") for i in range(5)]
    assert pressed == ["false", "true", "false", "true", "false"]
    await app.get_by_role("button", name=submit).click()
    await app.locator("#status.ok").wait_for()
    await shot(hosted, tmp_path, f"availability-{lang}")

    stored = await call(server, bearer, "get_event_details", {"event_id": event_id})
    assert stored["structuredContent"]["your_available_dates"] == [DAYS[1], DAYS[3]]
    calls = await hosted.js("window.seen.calls")
    assert [c["name"] for c in calls] == ["update_guest_availability"]
    # after saving, the grid is the tool's own result: the saved days stay pressed
    assert await app.locator("button.slot[aria-pressed=true]").count() == 2
    await hosted.close()


async def alice_sees(server: str, event_id: str, **claims: Any) -> tuple[str, dict[str, Any]]:
    """alice's bearer and her `get_events` result, with only the event `event_id`."""
    alice = token(sub="alice", preferred_username="alice", name="Alice Kim", **{"zoneinfo": "Asia/Seoul", **claims})
    events = await call(server, alice, "get_events", {"start": f"{NEXT_YEAR}-04-01T00:00:00+09:00"})
    mine = [e for e in events["structuredContent"]["events"] if e["id"] == event_id]
    return alice, {**events, "structuredContent": {**events["structuredContent"], "events": mine}}


@LOOKS
async def test_the_event_card_shows_the_invitees_answers(
    server: str, origins: Any, browser: Any, tmp_path: Path, lang: str, locale: str, theme: str
) -> None:
    guest = f"mina{lang}{os.getpid()}"
    event_id, bearer = await invited(server, guest, "Asia/Seoul")
    await call(server, bearer, "update_guest_availability", {"event_id": event_id, "available_dates": DAYS[:2]})
    alice, result = await alice_sees(server, event_id)
    hosted = await open_app(
        browser, origins, server, alice, "ui://truloop/event.html", {}, result, {"theme": theme, "locale": locale},
        width=360,
    )  # fmt: skip
    app = hosted.app
    await app.get_by_text(EVENT["title"]).wait_for()
    card = await app.locator("article").inner_text()
    assert await hosted.in_app("e => e.scrollWidth <= e.clientWidth")  # 360 px, no sideways scroll
    assert guest.title() in card and EVENT["location"] in card
    assert ("응답함" if lang == "ko" else "answered") in card
    assert json.dumps(card, ensure_ascii=False).count("Apr" if lang == "en" else "4월") >= 1
    await shot(hosted, tmp_path, f"event-{lang}")
    await hosted.close()


async def test_without_a_host_locale_the_callers_own_language_and_zone_are_used(
    server: str, origins: Any, browser: Any
) -> None:
    guest = f"joon{os.getpid()}"
    event_id, _ = await invited(server, guest, "Asia/Seoul")
    # alice, signed in with Korean as her language, travelling in New York; the host says no locale
    alice, result = await alice_sees(server, event_id, locale="ko-KR", zoneinfo="America/New_York")
    mine = result["structuredContent"]["events"]
    assert mine[0]["your_locale"] == "ko-KR" and mine[0]["your_timezone"] == "America/New_York"
    hosted = await open_app(
        browser, origins, server, alice, "ui://truloop/event.html", {}, result, {"theme": "dark"}, width=360
    )
    await hosted.app.get_by_text("아직 응답 없음").wait_for()
    card = await hosted.app.locator("article").inner_text()
    assert "America/New_York" in card and "오후 9:00" in card  # 10:00 in Seoul is 9 PM the day before in New York
    await hosted.close()


async def each_app(server: str, lang: str) -> dict[str, tuple[str, Any, Any]]:
    """Every app with a bearer, the tool's input and its result: (bearer, input, result) by app name."""
    guest = f"each{lang}{os.getpid()}"
    event_id, bearer = await invited(server, guest, "Asia/Seoul")
    details = await call(server, bearer, "get_event_details", {"event_id": event_id})
    alice, events = await alice_sees(server, event_id)
    return {
        "availability": (bearer, {"event_id": event_id}, details),
        "event": (alice, {}, events),
        "confirm": (alice, {"event_id": event_id}, None),  # (the host's dialog is still asking)
    }


async def settled(hosted: Hosted) -> list[dict[str, Any]]:
    """The sizes reported once the app stops reporting (no new one for half a second)."""
    count = -1
    while count != len(await hosted.sizes()):
        count = len(await hosted.sizes())
        await anyio.sleep(0.5)
    return await hosted.sizes()


@LOOKS
async def test_the_reported_size_follows_the_content_both_ways(
    server: str, origins: Any, browser: Any, lang: str, locale: str, theme: str
) -> None:
    """A container made 60 px wide, then 640 px again: the app's last reported height is its content's (within
    40 px), not the tallest it ever was."""
    for name, (bearer, tool_input, result) in (await each_app(server, lang)).items():
        hosted = await open_app(
            browser, origins, server, bearer, f"ui://truloop/{name}.html", tool_input, result,
            {"theme": theme, "locale": locale}, width=640,
        )  # fmt: skip
        await hosted.app.locator("main > *").first.wait_for()
        wide = (await settled(hosted))[-1]["height"]
        await hosted.js("window.setWidth(60)")
        narrow = (await settled(hosted))[-1]["height"]
        await hosted.js("window.setWidth(640)")
        last = (await settled(hosted))[-1]["height"]
        content = await hosted.in_app("() => Math.ceil(document.body.getBoundingClientRect().height)")
        assert narrow > wide, (name, wide, narrow)  # the content is taller at 60 px ...
        assert abs(last - content) <= 40 and abs(last - wide) <= 40, (name, wide, narrow, last, content)  # ... not now
        assert await hosted.in_app("e => e.dataset.theme") == theme
        await hosted.close()


CANCELLED = {"ko": "호출이 취소되었습니다.", "en": "The call was cancelled."}
WAITING = {
    "availability": {"ko": "일정을 불러오는 중…", "en": "Waiting for the event…"},
    "event": {"ko": "일정을 불러오는 중…", "en": "Waiting for the event…"},
    "confirm": {"ko": "앱이 보여 주는 확인 창에서", "en": "Confirm or cancel in the dialog"},
}


@LOOKS
async def test_tool_cancelled_leaves_every_apps_waiting_state(
    server: str, origins: Any, browser: Any, lang: str, locale: str, theme: str
) -> None:
    for name, (bearer, tool_input, _) in (await each_app(server, lang)).items():
        hosted = await open_app(
            browser, origins, server, bearer, f"ui://truloop/{name}.html", tool_input, None,
            {"theme": theme, "locale": locale}, width=360,
        )  # fmt: skip
        await hosted.app.get_by_text(WAITING[name][lang]).wait_for()
        await hosted.js("window.sendToolCancelled('user action')")
        await hosted.app.get_by_text(CANCELLED[lang]).wait_for()
        text = await hosted.app.locator("main").inner_text()
        assert WAITING[name][lang] not in text, (name, text)
        if name == "confirm":  # no longer waiting for a yes, and not saying it cannot be undone
            assert (
                ("확인을 기다리는" not in text and "되돌릴 수 없습니다" not in text)
                if lang == "ko"
                else ("waits for your yes" not in text and "cannot be undone" not in text)
            ), text
        await hosted.close()


@LOOKS
async def test_every_app_declares_and_honours_its_display_modes(
    server: str, origins: Any, browser: Any, lang: str, locale: str, theme: str
) -> None:
    apps = await each_app(server, lang)
    for name, (bearer, tool_input, result) in apps.items():
        # declared in ui/initialize; in a fixed 360x520 full-screen container the app fits it, scrolling inside
        context = {"theme": theme, "locale": locale, "displayMode": "fullscreen",
                   "containerDimensions": {"width": 360, "height": 520}}  # fmt: skip
        hosted = await open_app(
            browser, origins, server, bearer, f"ui://truloop/{name}.html", tool_input, result, context, width=360
        )
        await hosted.app.locator("main > *").first.wait_for()
        assert (await hosted.js("window.appCapabilities()"))["availableDisplayModes"] == ["inline", "fullscreen"]
        assert await hosted.in_app("e => e.dataset.displayMode") == "fullscreen"
        assert (await settled(hosted))[-1]["height"] == 520, name
        assert await hosted.in_app("e => e.scrollHeight <= 520 && e.getBoundingClientRect().height === 520"), name
        await hosted.close()

    # the picker over many days asks for full screen, where the host offers it, and can go back
    bearer, tool_input, details = apps["availability"]
    many = copy.deepcopy(details)
    many["structuredContent"]["candidate_date_range"]["last"] = f"{NEXT_YEAR}-05-10"
    hosted = await open_app(
        browser, origins, server, bearer, "ui://truloop/availability.html", tool_input, many,
        {"theme": theme, "locale": locale}, width=360,
    )  # fmt: skip
    await hosted.app.locator("button.slot").nth(30).wait_for()
    larger = {"ko": "크게 보기", "en": "Show larger"}[lang]
    back = {"ko": "대화로 돌아가기", "en": "Back to the chat"}[lang]
    await hosted.app.locator("button.slot").nth(2).click()
    await hosted.app.get_by_role("button", name=larger).click()
    await hosted.app.get_by_role("button", name=back).wait_for()
    assert await hosted.js("window.seen.modes") == ["fullscreen"]
    assert await hosted.in_app("e => e.dataset.displayMode") == "fullscreen"
    assert await hosted.app.locator("button.slot[aria-pressed=true]").count() == 1  # the pick survives the switch
    await hosted.app.get_by_role("button", name=back).click()
    await hosted.app.get_by_role("button", name=larger).wait_for()
    assert await hosted.js("window.seen.modes") == ["fullscreen", "inline"]
    await hosted.close()

    # a host that offers only inline: the picker does not ask
    hosted = await open_app(
        browser, origins, server, bearer, "ui://truloop/availability.html", tool_input, many,
        {"theme": theme, "locale": locale, "availableDisplayModes": ["inline"]}, width=360,
    )  # fmt: skip
    await hosted.app.locator("button.slot").nth(30).wait_for()
    assert await hosted.app.locator("#mode").count() == 0
    await hosted.close()


@LOOKS
async def test_an_unknown_host_request_gets_method_not_found(
    server: str, origins: Any, browser: Any, lang: str, locale: str, theme: str
) -> None:
    for name, (bearer, tool_input, result) in (await each_app(server, lang)).items():
        hosted = await open_app(
            browser, origins, server, bearer, f"ui://truloop/{name}.html", tool_input, result,
            {"theme": theme, "locale": locale}, width=360,
        )  # fmt: skip
        await hosted.app.locator("main > *").first.wait_for()
        answer = await hosted.js("window.askUnknown('truloop/no-such-method')")
        assert answer["error"]["code"] == -32601, (name, answer)
        assert (await hosted.js("window.askUnknown('ping')")) == {"result": {}}  # a request it knows
        await hosted.close()


@pytest.mark.parametrize(
    ("era", "lang", "locale", "theme", "yes"),
    [("2025-11-25", "ko", "ko-KR", "light", True), ("2026-07-28", "en", "en-US", "dark", False)],
)
async def test_the_confirmation_card_ends_on_its_outcome(
    server: str, origins: Any, browser: Any, tmp_path: Path, era: str, lang: str, locale: str, theme: str, yes: bool
) -> None:
    """The host's own dialog asks (elicitation on 2025-11-25, the call's inputRequests on 2026-07-28); the card shows
    what will change, then what became of it, and its text follows: no more "waits for your yes ... cannot be
    undone" once the outcome is in."""
    import httpx

    bearer = token(sub=f"carol{lang}{os.getpid()}", zoneinfo="Asia/Seoul")
    caps = {"elicitation": {}}

    async def modern(params: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=15) as client:
            return await modern_request(client, server, bearer, "tools/call", params, caps)

    saved = await modern({"name": "save_memory", "arguments": {"content": f"주차는 B2 / parking on B2 {lang}"}})
    memory_id = saved["structuredContent"]["id"]
    forget = {"memory_id": memory_id}
    context = {"theme": theme, "locale": locale, "toolInfo": {"tool": {"name": "forget_memory", "inputSchema": {
        "type": "object"}}}}  # fmt: skip
    hosted = await open_app(
        browser, origins, server, bearer, "ui://truloop/confirm.html", forget, None, context, width=360
    )
    app = hosted.app
    asking = {"ko": ("확인을 기다리는 변경", "되돌릴 수 없습니다."), "en": ("This change waits for your yes",
              "It cannot be undone.")}[lang]  # fmt: skip
    await app.get_by_text(asking[0]).wait_for()
    assert memory_id in await app.locator("dl").inner_text()  # what will change
    if lang == "ko":
        await shot(hosted, tmp_path, "confirm-ko")

    answer = {"action": "accept", "content": {"confirm": True}} if yes else {"action": "decline"}
    if era == "2025-11-25":  # the host's dialog: its client answers the server's elicitation
        callback = answering(answer["action"], answer.get("content"))
        result = await call(server, bearer, "forget_memory", forget, mode="legacy", elicitation_callback=callback)
    else:  # the host's dialog answers the call's inputRequests and calls again with its requestState
        held = await modern({"name": "forget_memory", "arguments": forget})
        assert held["resultType"] == "input_required"
        await hosted.js("(r) => window.sendToolResult(r)", held)  # a host that hands the card the question anyway
        await anyio.sleep(0.3)
        assert asking[0] in await app.locator("main").inner_text()  # still asking, in the dialog; no error
        (key,) = held["inputRequests"]
        result = await modern({"name": "forget_memory", "arguments": forget, "inputResponses": {key: answer},
                               "requestState": held["requestState"]})  # fmt: skip
    await hosted.js("(r) => window.sendToolResult(r)", result)
    ending = {("ko", True): ("변경했습니다", "완료했습니다."), ("en", False): ("Nothing changed",
              "Cancelled: nothing changed.")}[lang, yes]  # fmt: skip
    await app.get_by_text(ending[1]).wait_for()
    text = await app.locator("main").inner_text()
    assert ending[0] in text and memory_id in text, text
    assert asking[0] not in text and asking[1] not in text, text
    if lang == "en":
        await shot(hosted, tmp_path, "confirm-en")
    left = await modern({"name": "search_memories", "arguments": {"query": "parking"}})
    assert [hit["record"]["id"] for hit in left["structuredContent"]["memories"]] == ([] if yes else [memory_id])
    await hosted.close()


async def test_the_sandbox_enforces_the_specs_csp_and_the_tests_see_violations(
    server: str, origins: Any, browser: Any
) -> None:
    """The harness itself: the app runs under the spec's default CSP (no network), and a violation is one of the
    problems every test fails on."""
    bearer = token(sub=f"csp{os.getpid()}", zoneinfo="Asia/Seoul")
    hosted = await open_app(browser, origins, server, bearer, "ui://truloop/event.html", {}, None, {}, width=360)
    await hosted.app.locator("main > *").first.wait_for()
    blocked = await hosted.in_app("() => fetch('http://127.0.0.1:9/').then(() => 'fetched', (e) => e.name)")
    assert blocked == "TypeError"
    await anyio.sleep(0.3)
    await hosted.page.close()
    assert any("Content Security Policy" in problem for problem in hosted.problems), hosted.problems
