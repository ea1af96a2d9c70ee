"""`truloop-mcp apps preview`: each app as a standalone page with sample data, opened in Debian's chromium (Playwright,
no browser downloaded) straight from the file: it renders in Korean and in English, in both themes, without a console
error, and its own tools/call is answered by the stub host."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRULOOP, child_env

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

# what each app shows from its sample, in each language
SHOWN = {
    ("event", "ko"): ("초대받은 사람", "응답함", "아직 응답 없음"),
    ("event", "en"): ("Invitees", "answered", "not yet"),
    ("availability", "ko"): ("가능한 날을 모두 골라 주세요", "가능한 날 저장"),
    ("availability", "en"): ("Pick every day you can make", "Save my days"),
    ("confirm", "ko"): ("확인을 기다리는 변경", "되돌릴 수 없습니다.", "기억 / Memory"),
    ("confirm", "en"): ("This change waits for your yes", "It cannot be undone.", "기억 / Memory"),
}


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "Debian's chromium is not installed (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture
def previews(tmp_path: Path) -> Path:
    out = tmp_path / "previews"
    done = subprocess.run(
        [TRULOOP, "apps", "preview", "--out", str(out)], capture_output=True, text=True, timeout=30, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    assert "wrote 12 previews" in done.stdout
    return out


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


async def open_preview(browser: Any, page_file: Path) -> tuple[Any, list[str]]:
    page = await browser.new_page(viewport={"width": 420, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(page_file.as_uri())
    return page, problems


@pytest.mark.parametrize("app", ["event", "availability", "confirm"])
@pytest.mark.parametrize("lang", ["ko", "en"])
async def test_each_preview_renders_in_its_language_without_errors(
    previews: Path, browser: Any, app: str, lang: str
) -> None:
    for theme in ("light", "dark"):
        page, problems = await open_preview(browser, previews / f"{app}-{lang}-{theme}.html")
        frame = page.frame_locator("#app")
        for text in SHOWN[(app, lang)]:
            await frame.get_by_text(text, exact=True).first.wait_for(timeout=10_000)
        assert await frame.locator("html").get_attribute("lang") == lang
        assert await frame.locator("html").evaluate("e => e.dataset.theme") == theme
        assert problems == []
        await page.close()


async def test_a_preview_answers_the_apps_own_call(previews: Path, browser: Any) -> None:
    page, problems = await open_preview(browser, previews / "availability-en-light.html")
    frame = page.frame_locator("#app")
    await frame.locator("button.slot").first.click()
    await frame.get_by_role("button", name="Save my days").click()
    await frame.locator("#status.ok").wait_for(timeout=10_000)
    calls = [m for m in await page.evaluate("window.seen") if m.get("method") == "tools/call"]
    assert [call["params"]["name"] for call in calls] == ["update_guest_availability"]
    assert problems == []
    await page.close()


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "previews"
    done = subprocess.run(
        [TRULOOP, "apps", "preview", "--app", "nope", "--out", str(out)],
        capture_output=True, text=True, timeout=30, env=child_env(),
    )  # fmt: skip
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr
    assert not out.exists()
