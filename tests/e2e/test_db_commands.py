"""`truloop-mcp db migrate|status|copy`, run as an operator runs them (real subprocesses)."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from tests.people import PEOPLE
from tests.support import TRULOOP, child_env, services_for
from toolsets.infra.store.events import NewEvent

SEOUL = dt.timezone(dt.timedelta(hours=9))


def truloop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, *args], capture_output=True, text=True, env=child_env(), timeout=120)


@pytest.mark.anyio
async def test_copy_moves_an_embedded_store_onto_postgresql_without_loss(tmp_path: Path, database_url: str) -> None:
    embedded = services_for(tmp_path / "embedded")
    (embedded.docs_dir).mkdir(parents=True)
    (embedded.docs_dir / "handbook.md").write_text("# Handbook\n\n## 회의실 예약\n\n회의실은 하루 전에 예약합니다.\n")
    await embedded.users.import_users(PEOPLE)
    new = NewEvent(title="Offsite", start=dt.datetime(2031, 5, 1, 10, tzinfo=SEOUL),
                   end=dt.datetime(2031, 5, 3, 18, tzinfo=SEOUL), timezone="Asia/Seoul")  # fmt: skip
    event = await embedded.events.create("alice", new, ["bob", "gus"])
    await embedded.events.set_availability(event.id, "gus", ["2031-05-02"])
    memory = await embedded.memories.save("alice", "Bob prefers window seats on the KTX", ["travel"])
    await embedded.inbox.send(sender_id="bob", recipient_id="alice", text="hi", original="hi", composed_by="template")
    assert len(await embedded.knowledge.search("회의실", 3)) == 1
    embedded.close()

    copied = truloop("db", "copy", "--from", f"sqlite:{tmp_path / 'embedded'}", "--to", database_url)
    assert copied.returncode == 0, copied.stderr
    assert "every table's count and checksum match" in copied.stdout
    for line in ("users                     5        5", "memories                  1        1"):
        assert line in copied.stdout

    shared = services_for(tmp_path / "replica", database_url=database_url)  # another machine: no docs folder
    assert (await shared.users.get("bob")).email == "bob@example.com"  # type: ignore[union-attr]
    assert [u.id for u in await shared.users.find_by_username("Minji", 5)] == []
    assert [u.id for u in await shared.users.find_by_username("Alice", 5)] == ["alice"]
    moved = await shared.events.get(event.id)
    assert moved is not None and moved.invitee_ids() == ["bob", "gus"]
    assert moved.invitations[1].available_dates == ["2031-05-02"]
    hits = await shared.memories.search("alice", "window seat", 5)
    assert [hit.record.id for hit in hits] == [memory.id]
    assert [m.text for m in await shared.inbox.messages("alice", unread_only=True, limit=5, mark_read=False)] == ["hi"]
    found = await shared.knowledge.search("회의실 예약", 3)
    assert [hit.source for hit in found] == ["handbook.md"]
    await shared.aclose()

    again = truloop("db", "copy", "--from", f"sqlite:{tmp_path / 'embedded'}", "--to", database_url)
    assert again.returncode == 1 and "already holds data" in again.stderr  # never merged into data


def test_migrate_and_status_report_each_component(tmp_path: Path, database_url: str) -> None:
    before = truloop("db", "status", "--database-url", database_url)
    assert before.returncode == 0, before.stderr
    assert "users: schema 0 of 2 (pending migration)" in before.stdout
    migrated = truloop("db", "migrate", "--database-url", database_url)
    assert migrated.returncode == 0, migrated.stderr
    assert "knowledge: schema version 1" in migrated.stdout
    after = truloop("db", "status", "--database-url", database_url)
    assert "users: schema 2 of 2 (current); rows: users 0, user_groups 0" in after.stdout
    assert database_url not in after.stdout + after.stderr  # the URL may hold a password
    embedded = truloop("db", "migrate", "--data-dir", str(tmp_path / "data"))
    assert embedded.returncode == 0 and "SQLite" in embedded.stdout and "users: schema version 3" in embedded.stdout


def test_copy_refuses_what_it_cannot_copy(tmp_path: Path) -> None:
    missing = truloop(
        "db", "copy", "--from", f"sqlite:{tmp_path / 'none.sqlite3'}", "--to", "postgresql://x@127.0.0.1:1/x"
    )
    assert missing.returncode == 1 and "no such file" in missing.stderr
    wrong = truloop("db", "copy", "--from", str(tmp_path), "--to", "postgresql://x@127.0.0.1:1/x")
    assert wrong.returncode == 2 and "--from must be sqlite:PATH" in wrong.stderr


@pytest.mark.anyio
async def test_copy_never_writes_to_its_source(tmp_path: Path, database_url: str) -> None:
    import hashlib
    import os

    folder = tmp_path / "embedded"
    embedded = services_for(folder)
    await embedded.users.import_users(PEOPLE)
    embedded.close()
    store = folder / "truloop.sqlite3"
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}
    os.chmod(store, 0o400)
    os.chmod(folder, 0o500)  # a read-only source folder: nothing could be written there anyway
    try:
        copied = truloop("db", "copy", "--from", f"sqlite:{folder}", "--to", database_url)
    finally:
        os.chmod(folder, 0o700)
        os.chmod(store, 0o600)
    assert copied.returncode == 0, copied.stderr
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}
    assert after == before  # the same files, byte for byte
