"""Operator paths: `users import`, `--demo`, and users entering the directory from their token."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support import SECRET, TRULOOP, child_env, services_for, spawn_http_server, token


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, *args], capture_output=True, text=True, timeout=60, env=child_env())


def test_users_import_csv_and_json(tmp_path: Path) -> None:
    csv_file = tmp_path / "people.csv"
    csv_file.write_text(
        "id,username,display_name,phone,email,groups,role\n"
        "u1,minji,Kim Minji,010-1111-2222,MINJI@x.com,team;ops,member\n"
        "u2,hana,Choi Hana,,hana@x.com,,guest\n",
        encoding="utf-8",
    )
    json_file = tmp_path / "more.json"
    json_file.write_text(json.dumps([{"id": "u3", "username": "junho", "groups": ["team"]}]), encoding="utf-8")
    data = tmp_path / "data"
    first = run("users", "import", str(csv_file), "--data-dir", str(data))
    second = run("users", "import", str(json_file), "--data-dir", str(data))
    assert first.returncode == 0 and "imported 2 users" in first.stdout, first.stderr
    assert second.returncode == 0 and "imported 1 users" in second.stdout
    users = services_for(data).users

    async def check() -> None:
        minji = await users.get("u1")
        assert minji is not None and minji.phone == "+821011112222" and minji.email == "minji@x.com"
        assert minji.groups == ["ops", "team"]
        hana = await users.get("u2")
        assert hana is not None and hana.role == "guest" and hana.groups == []
        assert {u.id for u in await users.group_members("TEAM")} == {"u1", "u3"}

    anyio.run(check)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('[{"id": "x", "role": "admin"}]', "role"),
        ('{"id": "x"}', "JSON list"),
        ("[1, 2]", "JSON list"),
        ('[{"id": "a"}, {"id": "a"}]', "twice"),
        ("not json at all [", "no users"),
        ("username,email\nkim,kim@x.com\n", "id"),
    ],
)
def test_users_import_refuses_bad_files_in_one_line(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / ("bad.json" if content.lstrip().startswith(("[", "{")) else "bad.csv")
    bad.write_text(content, encoding="utf-8")
    proc = run("users", "import", str(bad), "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    missing = run("users", "import", str(tmp_path / "nope.csv"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_demo_seeds_an_empty_store_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_events", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "search_knowledge_base", "arguments": {"query": "dinner expenses"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "search_users", "arguments": {"query": "truloop-team", "by": "group"}}},
    ]  # fmt: skip
    stdin = "\n".join(json.dumps(line) for line in lines) + "\n"
    for _ in range(2):
        proc = subprocess.run(
            [TRULOOP, "--demo", "--data-dir", str(data), "--user", "me"], input=stdin, capture_output=True,
            text=True, timeout=60, env=child_env(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, proc.stdout.splitlines())}
    events = replies[2]["result"]["structuredContent"]["events"]
    assert {e["title"] for e in events} == {"Team dinner", "Design review"}  # seeded once, not twice
    hits = replies[3]["result"]["structuredContent"]["hits"]
    assert hits and hits[0]["title"] == "Team Handbook"
    team = {u["id"] for u in replies[4]["result"]["structuredContent"]["users"]}
    assert team == {"me", "minji", "junho"}


@pytest.mark.anyio
async def test_token_users_enter_the_directory_on_first_use(tmp_path: Path) -> None:
    env = child_env(TRULOOP_JWT_SECRET=SECRET, TRULOOP_DATA_DIR=str(tmp_path / "data"))
    newcomer = token(sub="n-1", preferred_username="newbie", name="New Person", email="New@Example.com",
                     phone_number="010-5555-6666")  # fmt: skip
    with spawn_http_server(env=env) as base:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {newcomer}"}, timeout=30)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            me = await client.call_tool("get_user_profile", {})
        other = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token(sub='someone-else')}"}, timeout=30)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=other)) as client:
            found = await client.call_tool("search_users", {"query": "new@example.com", "by": "contact"})
    profile = me.structured_content
    assert profile is not None and profile["username"] == "newbie" and profile["phone"] == "+821055556666"
    assert [u["id"] for u in found.structured_content["users"]] == ["n-1"]  # type: ignore[index]


def test_notion_sync_without_a_token_says_what_to_set(tmp_path: Path) -> None:
    proc = run("notion", "sync", "--data-dir", str(tmp_path / "data"))
    assert proc.returncode == 2 and "NOTION_TOKEN" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_partial_import_updates_only_the_columns_it_names(tmp_path: Path, backend: str) -> None:
    import contextlib

    from tests.conftest import TEST_DATABASE_URL
    from tests.support import fresh_schema

    data = tmp_path / "data"
    store = ["--data-dir", str(data)]
    schema = fresh_schema(TEST_DATABASE_URL) if backend == "postgresql" else contextlib.nullcontext(None)
    with schema as url:
        if url is not None:
            store += ["--database-url", url]
        full = tmp_path / "full.csv"
        full.write_text("id,username,display_name,phone,email,groups\nu1,minji,김민지,010-1111-2222,m@x.com,team;ops\n")
        partial = tmp_path / "partial.csv"
        partial.write_text("id,username\nu1,minji.kim\n")
        assert run("users", "import", str(full), *store).returncode == 0
        done = run("users", "import", str(partial), *store)
        assert done.returncode == 0, done.stderr
        users = services_for(data, database_url=url).users

        async def check() -> None:
            minji = await users.get("u1")
            assert minji is not None and minji.username == "minji.kim"  # the named column changed
            assert (minji.display_name, minji.phone, minji.email) == ("김민지", "+821011112222", "m@x.com")
            assert sorted(minji.groups) == ["ops", "team"]  # groups not named: kept

        anyio.run(check)
