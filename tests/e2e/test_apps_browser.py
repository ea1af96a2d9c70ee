"""The MCP Apps in a real browser: Playwright drives Debian's chromium (the executable the machine has; no browser is
downloaded), which loads each app, as the real server serves it (`resources/read`), into a test host page that
plays the host's side of the protocol (tests/apps/host.html): the handshake with the host's theme and locale, the
tool's input and result, and the app's `tools/call` forwarded to the real server over MCP.

Screenshots go to the test's folder, and to $TEST_ARTIFACTS_DIR when it is set."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import SECRET, child_env, mcp_client, modern_request, spawn_http_server, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

HOST_PAGE = Path(__file__).resolve().parents[1] / "apps" / "host.html"
NEXT_YEAR = dt.date.today().year + 1
EVENT = {
    "title": "팀 워크숍 / Team workshop",
    "start": f"{NEXT_YEAR}-04-06T10:00:00+09:00",
    "end": f"{NEXT_YEAR}-04-10T18:00:00+09:00",
    "availability_deadline": f"{NEXT_YEAR}-04-01T18:00:00+09:00",
    "location": "서울 본사 3층",
}
DAYS = [f"{NEXT_YEAR}-04-{day:02d}" for day in range(6, 11)]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "Debian's chromium is not installed (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


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
        launched = await playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"], env=env)
        try:
            yield launched
        finally:
            await launched.close()


async def call(base: str, bearer: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with mcp_client(base, bearer) as client:
        result = await client.call_tool(name, arguments)
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def app_html(base: str, bearer: str, uri: str) -> str:
    async with mcp_client(base, bearer) as client:
        read = await client.read_resource(uri)
    (contents,) = read.contents
    assert contents.mime_type == "text/html;profile=mcp-app"
    return str(contents.text)  # type: ignore[union-attr]


async def open_app(
    browser: Any,
    base: str,
    bearer: str,
    uri: str,
    tool_input: Any,
    result: Any,
    context: dict[str, Any],
    width: int,
    forward: Any = None,
) -> Any:
    """A page of the test host at `width` px, showing the app with the tool's input and result; the app's
    `tools/call` goes to the server through `forward` (default: the handshake-era MCP client)."""
    page = await browser.new_page(viewport={"width": width, "height": 900})

    async def handshake_era(params: dict[str, Any]) -> dict[str, Any]:
        return await call(base, bearer, params["name"], params.get("arguments") or {})

    await page.expose_function("forwardToolCall", forward or handshake_era)
    await page.goto(HOST_PAGE.as_uri())
    html = await app_html(base, bearer, uri)
    await page.evaluate("([h, i, r, c]) => window.loadApp(h, i, r, c)", [html, tool_input, result, context])
    return page


async def shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    await page.locator("#app").screenshot(path=str(path))  # the app as the host shows it
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
    server: str, browser: Any, tmp_path: Path, lang: str, zone: str, locale: str, theme: str, heading: str, submit: str
) -> None:
    guest = f"guest{lang}{os.getpid()}"
    event_id, bearer = await invited(server, guest, zone)
    details = await call(server, bearer, "get_event_details", {"event_id": event_id})
    assert details["structuredContent"]["your_timezone"] == zone
    page = await open_app(
        browser, server, bearer, "ui://truloop/availability.html", {"event_id": event_id}, details,
        {"theme": theme, "locale": locale, "displayMode": "inline"}, width=360,
    )  # fmt: skip
    app = page.frame_locator("#app")
    await app.get_by_text(heading).wait_for()
    slots = app.locator("button.slot")
    assert await slots.count() == len(DAYS)
    assert [await slots.nth(i).get_attribute("data-date") for i in range(len(DAYS))] == DAYS
    # the event's time in the caller's zone: 10:00 in Seoul, 21:00 the evening before in New York
    hours = await app.locator("main p").first.inner_text()
    assert ("10:00" in hours or "오전 10:00" in hours) if zone == "Asia/Seoul" else "9:00 PM" in hours, hours
    # no sideways scrolling at a phone's width
    assert await app.locator("html").evaluate("e => e.scrollWidth <= e.clientWidth")
    assert await app.locator("html").evaluate("e => e.dataset.theme") == theme

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
    assert [await slots.nth(i).get_attribute("aria-pressed") for i in range(5)] == [
        "false",
        "true",
        "false",
        "true",
        "false",
    ]
    await app.get_by_role("button", name=submit).click()
    await app.locator("#status.ok").wait_for()
    await shot(page, tmp_path, f"availability-{lang}")

    stored = await call(server, bearer, "get_event_details", {"event_id": event_id})
    assert stored["structuredContent"]["your_available_dates"] == [DAYS[1], DAYS[3]]
    calls = [m for m in await page.evaluate("window.seen") if m.get("method") == "tools/call"]
    assert [c["params"]["name"] for c in calls] == ["update_guest_availability"]
    # after saving, the grid is the tool's own result: the saved days stay pressed
    assert await app.locator("button.slot[aria-pressed=true]").count() == 2
    await page.close()


async def test_the_event_card_shows_the_invitees_answers(server: str, browser: Any, tmp_path: Path) -> None:
    guest = f"mina{os.getpid()}"
    event_id, bearer = await invited(server, guest, "Asia/Seoul")
    await call(server, bearer, "update_guest_availability", {"event_id": event_id, "available_dates": DAYS[:2]})
    alice = token(sub="alice", preferred_username="alice", name="Alice Kim", zoneinfo="Asia/Seoul")
    events = await call(server, alice, "get_events", {"start": f"{NEXT_YEAR}-04-01T00:00:00+09:00"})
    mine = [e for e in events["structuredContent"]["events"] if e["id"] == event_id]
    result = {**events, "structuredContent": {**events["structuredContent"], "events": mine}}
    for lang, locale in (("ko", "ko-KR"), ("en", "en-US")):
        page = await open_app(
            browser, server, alice, "ui://truloop/event.html", {}, result,
            {"theme": "light", "locale": locale}, width=360,
        )  # fmt: skip
        app = page.frame_locator("#app")
        await app.get_by_text(EVENT["title"]).wait_for()
        card = await app.locator("article").inner_text()
        assert await app.locator("html").evaluate("e => e.scrollWidth <= e.clientWidth")  # 360 px, no sideways scroll
        assert guest.title() in card and EVENT["location"] in card
        assert ("응답함" if lang == "ko" else "answered") in card
        assert json.dumps(card, ensure_ascii=False).count("Apr" if lang == "en" else "4월") >= 1
        await shot(page, tmp_path, f"event-{lang}")
        await page.close()


async def test_the_confirmation_card_changes_nothing_until_confirm(server: str, browser: Any, tmp_path: Path) -> None:
    """A 2026-07-28 host: the held call's question reaches the card, whose Confirm answers it (the request's own
    `inputResponses` and sealed `requestState`); the memory is forgotten only then."""
    import httpx

    bearer = token(sub=f"carol{os.getpid()}", zoneinfo="Asia/Seoul")
    caps = {"elicitation": {}}

    async def modern(params: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=15) as client:
            return await modern_request(client, server, bearer, "tools/call", params, caps)

    saved = await modern({"name": "save_memory", "arguments": {"content": "주차는 B2 / parking on B2"}})
    memory_id = saved["structuredContent"]["id"]
    held = await modern({"name": "forget_memory", "arguments": {"memory_id": memory_id}})
    assert held["resultType"] == "input_required"
    context = {"theme": "light", "locale": "ko-KR", "toolInfo": {"tool": {"name": "forget_memory"}}}
    page = await open_app(
        browser, server, bearer, "ui://truloop/confirm.html", {"memory_id": memory_id}, held, context, width=360,
        forward=modern,
    )  # fmt: skip
    app = page.frame_locator("#app")
    await app.get_by_role("button", name="확인").wait_for()
    await shot(page, tmp_path, "confirm-ko")
    still = await modern({"name": "search_memories", "arguments": {"query": "parking"}})
    assert [hit["record"]["id"] for hit in still["structuredContent"]["memories"]] == [memory_id]

    await app.get_by_role("button", name="확인").click()
    await app.get_by_text("완료했습니다.").wait_for()
    gone = await modern({"name": "search_memories", "arguments": {"query": "parking"}})
    assert gone["structuredContent"]["memories"] == []
    await page.close()


async def test_without_a_host_locale_the_callers_own_language_and_zone_are_used(
    server: str, browser: Any, tmp_path: Path
) -> None:
    guest = f"joon{os.getpid()}"
    event_id, _ = await invited(server, guest, "Asia/Seoul")
    # alice, signed in with Korean as her language, travelling in New York; the host says no locale
    alice = token(sub="alice", preferred_username="alice", locale="ko-KR", zoneinfo="America/New_York")
    events = await call(server, alice, "get_events", {"start": f"{NEXT_YEAR}-04-01T00:00:00+09:00"})
    mine = [e for e in events["structuredContent"]["events"] if e["id"] == event_id]
    assert mine[0]["your_locale"] == "ko-KR" and mine[0]["your_timezone"] == "America/New_York"
    result = {**events, "structuredContent": {"events": mine}}
    page = await open_app(browser, server, alice, "ui://truloop/event.html", {}, result, {"theme": "dark"}, width=360)
    app = page.frame_locator("#app")
    await app.get_by_text("아직 응답 없음").wait_for()
    card = await app.locator("article").inner_text()
    assert "America/New_York" in card and "오후 9:00" in card  # 10:00 in Seoul is 9 PM the day before in New York
    await page.close()
