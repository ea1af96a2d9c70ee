"""A test that hangs, here in an async fixture's teardown, is ended by its timeout with a report that names it, the
phase it hung in and the await chain of every asyncio task (tests/timeouts.py, installed by tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HANGING = """
import asyncio

import pytest

pytestmark = pytest.mark.anyio


async def wait_for_nobody(event):
    await event.wait()


@pytest.fixture
async def stuck():
    yield
    await wait_for_nobody(asyncio.Event())  # nobody sets it: the teardown hangs


async def test_with_a_stuck_teardown(stuck):
    pass
"""

CONFTEST = """
from tests.conftest import anyio_backend, pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown
from tests.conftest import pytest_timeout_set_timer
"""


def test_a_hung_teardown_is_named_with_its_tasks(tmp_path: Path) -> None:
    (tmp_path / "test_hanging.py").write_text(HANGING)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=2", "--timeout-method=thread"]
    done = subprocess.run(
        [*args, "test_hanging.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "Timeout after 2 s in teardown: test_hanging.py::test_with_a_stuck_teardown" in out, out
    assert "asyncio tasks" in out, out
    chain = out[out.index("asyncio tasks") :]
    assert "in stuck" in chain and "in wait_for_nobody" in chain, out  # the await chain, down to the wait
    assert "await event.wait()" in chain, out
    assert "Stack of" in out, out  # pytest-timeout's thread dump follows
