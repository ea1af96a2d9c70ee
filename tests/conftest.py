from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts a process is marked `slow` (tests/slow_marks.py)."""
    from tests.slow_marks import spawning_functions, spawns

    spawners: dict[str, set[str]] = {}
    for item in items:
        function = getattr(item, "function", None)
        if function is None or item.get_closest_marker("slow"):
            continue
        module = item.module  # type: ignore[attr-defined]  # a pytest.Function's module
        if module.__name__ not in spawners:
            spawners[module.__name__] = spawning_functions(module)
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        fixtures = [definition.func for chain in definitions for definition in chain]
        if spawns(function, fixtures, spawners[module.__name__]):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """Every test's timeout (pyproject.toml: 180 s, setup and teardown included) names the test, the phase it hung
    in and its asyncio tasks before pytest-timeout's thread dump (tests/timeouts.py)."""
    from tests.timeouts import start_timer

    return start_timer(item, settings)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    from tests.timeouts import PHASE

    item.stash[PHASE] = "setup"
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    from tests.timeouts import PHASE

    item.stash[PHASE] = "call"
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    from tests.timeouts import PHASE

    item.stash[PHASE] = "teardown"
    return (yield)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("TRULOOP_") or key == "DATABASE_URL":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture(autouse=True)
def _pools_closed(request: pytest.FixtureRequest) -> None:
    """An async test closes every PostgreSQL pool it opened, within its own event loop (`_close_pools`)."""
    if "anyio_backend" in request.fixturenames:
        request.getfixturevalue("_close_pools")


@pytest.fixture
async def _close_pools(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """psycopg_pool's background tasks swallow a cancellation that lands while they run a job (a connection being
    made, one being checked) and wait for their next job forever, so a pool left open when the test's event loop
    shuts down could hang that shutdown (the loop waits for every task it cancelled). Each test's pools are closed
    here instead, bounded: `close()` stops the tasks the pool's way."""
    import weakref

    import anyio

    from toolsets.infra.store.postgres.database import PgDatabase

    opened: weakref.WeakSet[PgDatabase] = weakref.WeakSet()
    made = PgDatabase.__init__

    def tracked(self: PgDatabase, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        opened.add(self)

    monkeypatch.setattr(PgDatabase, "__init__", tracked)
    yield
    with anyio.fail_after(30):
        for database in list(opened):
            await database.close()


@pytest.fixture
def redis_url() -> str:
    """The shared Redis (CI starts one). Unreachable: a failure under CI, a skip on a laptop without Redis."""
    import socket

    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    host_port = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    host, _, port = host_port.partition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port or 6379)), timeout=1):
            pass
    except OSError:
        message = f"Redis is not reachable at {url}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return url


@pytest.fixture
def redis_prefix() -> str:
    import secrets

    return f"truloop-test-{secrets.token_hex(4)}:"


TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test"


def postgres_or_fail() -> str:
    """The PostgreSQL the tests use (TEST_DATABASE_URL; CI starts one). Unreachable: a failure under CI,
    a skip on a laptop without PostgreSQL."""
    import psycopg

    try:
        psycopg.connect(TEST_DATABASE_URL, connect_timeout=3).close()
    except psycopg.Error as exc:
        message = f"PostgreSQL is not reachable at {TEST_DATABASE_URL}: {type(exc).__name__}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return TEST_DATABASE_URL


@pytest.fixture
def database_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL schema for one test (its URL selects it through search_path), dropped after,
    with every connection the test left open."""
    from tests.support import fresh_schema

    with fresh_schema(postgres_or_fail()) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Runs a test once on each backend: the in-process helpers of tests/support.py (services_for,
    settings, server_for) use SQLite in the test's folder, then a fresh PostgreSQL schema."""
    from tests import support

    if request.param == "sqlite":
        yield "sqlite"
        return
    with support.fresh_schema(postgres_or_fail()) as url:
        monkeypatch.setattr(support, "STORE_URL", url)
        yield "postgresql"


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """An empty tools folder (`--tools-dir`)."""
    folder = tmp_path / "tools"
    folder.mkdir()
    return folder


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The server's data folder (created by the server)."""
    return tmp_path / "data"
