"""Each caller's zone and language on every front: the token's `zoneinfo`/`locale`, else the directory's, else
`--timezone`/`--locale`, else the machine's (docs/sign-in.md, "Zone and language"); and the demo's local times."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jwt
import pytest
from mcp import Client, StdioServerParameters

from tests.support import SECRET, TRULOOP, child_env, mcp_client, payload, spawn_http_server, token

pytestmark = pytest.mark.timeout(120)
SEOUL = ZoneInfo("Asia/Seoul")
SECURED = {"TRULOOP_JWT_SECRET": SECRET}


def tomorrow_at(hour: int, zone: ZoneInfo = SEOUL) -> str:
    """Tomorrow at `hour` in `zone`, without an offset (read in the caller's zone)."""
    day = dt.datetime.now(zone).date() + dt.timedelta(days=1)
    return dt.datetime.combine(day, dt.time(hour)).isoformat()


async def what_the_caller_sees(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """get_current_datetime, and an event made at 19:00 tomorrow without a zone."""
    now = payload(await client.call_tool("get_current_datetime", {}))
    made = {"title": "회식", "start": tomorrow_at(19), "end": tomorrow_at(21)}
    return now, payload(await client.call_tool("create_event", made))


def import_users(data: Path, name: str, text: str, *flags: str) -> subprocess.CompletedProcess[str]:
    source = data.parent / name
    source.write_text(text, encoding="utf-8")
    command = [TRULOOP, "users", "import", str(source), "--data-dir", str(data), *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=child_env())


@pytest.mark.anyio
async def test_a_korean_token_over_http_gets_seoul_times_from_a_utc_server() -> None:
    with spawn_http_server("--timezone", "UTC", "--locale", "en-US", env=child_env(**SECURED)) as base:
        async with mcp_client(base, token("minji", zoneinfo="Asia/Seoul", locale="ko-KR")) as client:
            now, event = await what_the_caller_sees(client)
            when = {"tool": "get_day_of_week", "when": "0 8 * * 1-5", "arguments": {"date": "2026-03-10"}}
            schedule = payload(await client.call_tool("schedule_tool_run", when))
    assert now["utc_offset"] == "+09:00" and now["timezone"] == "Asia/Seoul"
    assert event["timezone"] == "Asia/Seoul" and event["start"] == tomorrow_at(19) + "+09:00"
    assert event["your_timezone"] == "Asia/Seoul" and event["your_locale"] == "ko-KR"
    next_run = dt.datetime.fromisoformat(schedule["next_run_at"])
    assert next_run.utcoffset() == dt.timedelta(hours=9) and (next_run.hour, next_run.minute) == (8, 0)
    assert next_run.weekday() < 5


@pytest.mark.anyio
async def test_the_directorys_zone_and_language_apply_when_the_token_names_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = import_users(data, "people.csv", "id,username,timezone,locale\nminji,minji,Asia/Seoul,ko_KR\n")
    assert done.returncode == 0, done.stderr
    with spawn_http_server(
        "--timezone", "UTC", "--locale", "en", "--data-dir", str(data), env=child_env(**SECURED)
    ) as base:
        async with mcp_client(base, token("minji")) as client:
            now, event = await what_the_caller_sees(client)
        async with mcp_client(base, token("minji", zoneinfo="Mars/Olympus", locale="not a tag!")) as client:
            ignored, _ = await what_the_caller_sees(client)  # bad claims are ignored: the directory's apply
        async with mcp_client(base, token("minji", zoneinfo="Europe/Berlin", locale="de-DE")) as client:
            claimed, in_berlin = await what_the_caller_sees(client)
        async with mcp_client(base, token("nobody-listed")) as client:
            server_default, as_server = await what_the_caller_sees(client)
    assert now["timezone"] == "Asia/Seoul" and now["utc_offset"] == "+09:00"
    assert event["timezone"] == "Asia/Seoul" and event["your_locale"] == "ko-KR"
    assert ignored["timezone"] == "Asia/Seoul"
    assert claimed["timezone"] == "Europe/Berlin" and in_berlin["your_locale"] == "de-DE"  # the token wins
    assert server_default["timezone"] == "UTC" and as_server["your_locale"] == "en"


@pytest.mark.anyio
async def test_stdio_finds_the_users_zone_in_the_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rows = [{"id": "minji", "timezone": "Asia/Seoul", "locale": "ko-KR"}]
    assert import_users(data, "people.json", json.dumps(rows)).returncode == 0
    args = ["--data-dir", str(data), "--user", "minji", "--timezone", "UTC"]
    async with Client(StdioServerParameters(command=TRULOOP, args=args, env=child_env()), mode="legacy") as client:
        now, event = await what_the_caller_sees(client)
    assert now["utc_offset"] == "+09:00" and event["timezone"] == "Asia/Seoul" and event["your_locale"] == "ko-KR"


def test_users_import_takes_zones_and_languages_from_csv_and_json(store_backend: str, tmp_path: Path) -> None:
    from tests import support

    data = tmp_path / "data"
    store = ("--database-url", support.STORE_URL) if store_backend == "postgresql" and support.STORE_URL else ()
    csv_text = "id,username,timezone,locale\nminji,minji,Asia/Seoul,ko-kr\njunho,junho,,\n"
    assert import_users(data, "people.csv", csv_text, *store).returncode == 0
    rows = [{"id": "sora", "timezone": "America/Los_Angeles", "locale": "en_US"}, {"id": "hana", "locale": "ko"}]
    assert import_users(data, "people.json", json.dumps(rows), *store).returncode == 0
    refused = import_users(data, "bad.csv", "id,timezone\nminji,Seoul/Gangnam\n", *store)
    assert refused.returncode != 0 and "timezone must be an IANA time zone" in refused.stderr
    bad_tag = import_users(data, "bad.json", json.dumps([{"id": "minji", "locale": "korean please"}]), *store)
    assert bad_tag.returncode != 0 and "locale must be a BCP 47 language tag" in bad_tag.stderr

    import anyio

    async def read() -> dict[str, tuple[str | None, str | None]]:
        services = support.services_for(data)
        try:
            found = await services.users.get_many(["minji", "junho", "sora", "hana"])
        finally:
            await services.aclose()
        return {user_id: (user.timezone, user.locale) for user_id, user in found.items()}

    assert anyio.run(read) == {
        "minji": ("Asia/Seoul", "ko-KR"),  # the refused imports changed nothing
        "junho": (None, None),
        "sora": ("America/Los_Angeles", "en-US"),
        "hana": (None, "ko"),
    }


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({"LANG": "ko_KR.UTF-8"}, "ko-KR"), ({"LC_ALL": "C.UTF-8", "LANG": "ko_KR.UTF-8"}, "en"), ({}, "en"),
     ({"LANG": "ko_KR.UTF-8", "TRULOOP_LOCALE": "ja_jp"}, "ja-JP")],
)  # fmt: skip
def test_the_locale_defaults_to_the_machines(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], expected: str
) -> None:
    from server.settings import load_settings

    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert load_settings({}).locale == expected


@pytest.mark.parametrize(("args", "env"), [(["--locale", "korean!"], {}), ([], {"TRULOOP_LOCALE": "C"})])
def test_a_bad_locale_is_refused_at_start_in_one_line(args: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run([TRULOOP, *args], capture_output=True, text=True, timeout=30, env=child_env(**env))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("truloop-mcp: error: --locale / TRULOOP_LOCALE: must be a BCP 47 language tag")


def test_token_mints_the_zoneinfo_and_locale_claims() -> None:
    def mint(*flags: str) -> subprocess.CompletedProcess[str]:
        command = [TRULOOP, "token", "--user", "minji", "--jwt-audience", "truloop-tests", *flags]
        return subprocess.run(command, capture_output=True, text=True, timeout=30, env=child_env(**SECURED))

    minted = mint("--zoneinfo", "Asia/Seoul", "--locale", "ko_KR")
    claims = jwt.decode(minted.stdout.strip(), SECRET, algorithms=["HS256"], audience="truloop-tests")
    assert claims["zoneinfo"] == "Asia/Seoul" and claims["locale"] == "ko-KR"
    plain = jwt.decode(mint().stdout.strip(), SECRET, algorithms=["HS256"], audience="truloop-tests")
    assert "zoneinfo" not in plain and "locale" not in plain
    for flags, said in ((("--zoneinfo", "Seoul"),), "--zoneinfo 'Seoul'"), ((("--locale", "korean!"),), "--locale"):
        refused = mint(*flags[0])
        assert refused.returncode != 0 and refused.stdout == "" and said in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.anyio
async def test_the_demos_dinner_is_in_the_evening_in_seoul_on_a_utc_machine() -> None:
    with spawn_http_server("--demo", env=child_env(TZ="UTC", **SECURED)) as base:
        async with mcp_client(base, token("local")) as client:  # the demo's `you` (--user), with no zone of its own
            listed = payload(await client.call_tool("get_events", {"end": _in_days(60)}))
    events = {event["title"]: event for event in listed["events"]}
    dinner = dt.datetime.fromisoformat(events["Team dinner"]["start"]).astimezone(SEOUL)
    review = dt.datetime.fromisoformat(events["Design review"]["start"]).astimezone(SEOUL)
    assert (dinner.hour, review.hour) == (19, 10)
    assert events["Team dinner"]["your_timezone"] == "Asia/Seoul"


def _in_days(days: int) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).isoformat(timespec="seconds")
