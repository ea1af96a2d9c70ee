"""The store's backends are interchangeable by contract: each component's SQLite and PostgreSQL
implementations offer every method of its Protocol with the same signature, neither builds on the other,
and `open_backend` picks one from the settings without opening or importing a database."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.support import child_env
from toolsets.infra.store.backend import StoreBackend, open_backend
from toolsets.infra.store.events import EventStore
from toolsets.infra.store.events.postgres import PgEventStore
from toolsets.infra.store.events.sqlite import SqliteEventStore
from toolsets.infra.store.inbox import InboxStore
from toolsets.infra.store.inbox.postgres import PgInbox
from toolsets.infra.store.inbox.sqlite import SqliteInbox
from toolsets.infra.store.knowledge import KnowledgeTables
from toolsets.infra.store.knowledge.postgres import PgKnowledgeTables
from toolsets.infra.store.knowledge.sqlite import SqliteKnowledgeTables
from toolsets.infra.store.memories import MemoryStore
from toolsets.infra.store.memories.postgres import PgMemories
from toolsets.infra.store.memories.sqlite import SqliteMemories
from toolsets.infra.store.postgres.backend import PostgresBackend
from toolsets.infra.store.sqlite.backend import SqliteBackend
from toolsets.infra.store.users import UserStore
from toolsets.infra.store.users.postgres import PgUserStore
from toolsets.infra.store.users.sqlite import SqliteUserStore
from toolsets.infra.upstream.supermemory import SupermemoryMemories

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS: list[tuple[type, tuple[type, ...]]] = [
    (UserStore, (SqliteUserStore, PgUserStore)),
    (EventStore, (SqliteEventStore, PgEventStore)),
    (InboxStore, (SqliteInbox, PgInbox)),
    (MemoryStore, (SqliteMemories, PgMemories, SupermemoryMemories)),
    (KnowledgeTables, (SqliteKnowledgeTables, PgKnowledgeTables)),
    (StoreBackend, (SqliteBackend, PostgresBackend)),
]


def members(protocol: type) -> dict[str, Any]:
    """The protocol's own methods, properties and attributes (what an implementation must offer)."""
    found: dict[str, Any] = {name: None for name in getattr(protocol, "__annotations__", {})}
    found.update({name: value for name, value in vars(protocol).items() if not name.startswith("_")})
    return found


def shape(function: Any) -> tuple[bool, list[tuple[str, Any, Any, Any]], Any]:
    """Whether `function` is a coroutine function, its parameters (name, kind, default, annotation) after
    `self`, and its return annotation: what a caller of the contract relies on."""
    signature = inspect.signature(function)
    parameters = [(p.name, p.kind, p.default, p.annotation) for p in list(signature.parameters.values())[1:]]
    return inspect.iscoroutinefunction(function), parameters, signature.return_annotation


@pytest.mark.parametrize(("protocol", "implementations"), CONTRACTS, ids=[p.__name__ for p, _ in CONTRACTS])
def test_every_implementation_offers_the_protocol_with_the_same_signatures(
    protocol: type, implementations: tuple[type, ...]
) -> None:
    expected = members(protocol)
    assert expected, protocol
    for implementation in implementations:
        for name, declared in expected.items():
            assert hasattr(implementation, name), f"{implementation.__name__} has no {name}"
            if not inspect.isfunction(declared):
                continue  # an attribute or a property: present is what the contract asks
            offered = getattr(implementation, name)
            assert inspect.isfunction(offered), f"{implementation.__name__}.{name} is not a method"
            coroutine, parameters, _ = shape(offered)
            want_coroutine, want_parameters, _ = shape(declared)
            assert coroutine == want_coroutine, f"{implementation.__name__}.{name}: async differs"
            assert [p[:3] for p in parameters] == [p[:3] for p in want_parameters], f"{implementation.__name__}.{name}"


@pytest.mark.parametrize(("protocol", "implementations"), CONTRACTS[:-1], ids=[p.__name__ for p, _ in CONTRACTS[:-1]])
def test_the_store_implementations_agree_to_the_letter_and_build_on_nothing(
    protocol: type, implementations: tuple[type, ...]
) -> None:
    """SQLite and PostgreSQL side by side: the same annotations too, and neither subclasses the other."""
    sqlite, postgres = implementations[:2]
    for name, declared in members(protocol).items():
        if inspect.isfunction(declared):
            assert shape(getattr(sqlite, name)) == shape(getattr(postgres, name)), name
    assert sqlite.__mro__[1:] == (object,) and postgres.__mro__[1:] == (object,)


def test_open_backend_picks_by_the_database_url_and_opens_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    embedded = open_backend(data, None)
    assert isinstance(embedded, SqliteBackend) and not embedded.shared
    assert embedded.path == data / "truloop.sqlite3"
    shared = open_backend(data, SecretStr("postgresql://user:secret@127.0.0.1:1/none"))
    assert isinstance(shared, PostgresBackend) and shared.shared
    assert "secret" not in repr(shared) + shared.describe() + shared.location  # the URL may hold a password
    assert not data.exists()  # nothing created, nothing opened
    assert "db" not in vars(embedded) and "pg" not in vars(shared)


def test_opening_a_backend_imports_no_database_driver(tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from pydantic import SecretStr\n"
        "from toolsets.infra.store.backend import open_backend\n"
        f"open_backend(Path({str(tmp_path)!r}), None)\n"
        f"open_backend(Path({str(tmp_path)!r}), SecretStr('postgresql://x@127.0.0.1:1/x'))\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT, env=child_env()
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)
    heavy = ("sqlite3", "psycopg", "psycopg_pool", "toolsets.infra.store.sqlite.database",
             "toolsets.infra.store.postgres.database", "toolsets.infra.store.users")  # fmt: skip
    assert [m for m in loaded if m.startswith(heavy)] == []
