"""At start, a database or Redis the settings name that does not answer stops the server within seconds, with
one line naming the store and its URL (password masked); `--wait-for-store SECONDS` waits for it instead."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from server.runtime.store_check import masked_url
from tests.bridge.test_redis_outage import PrivateRedis
from tests.support import TRULOOP, child_env

SECRET_WORD = "s3cr3t-pw"
DEAD_POSTGRES = f"postgresql://bob:{SECRET_WORD}@127.0.0.1:1/truloop"
DEAD_REDIS = f"redis://:{SECRET_WORD}@127.0.0.1:1/0"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _start(tmp_path: Path, *flags: str, stdin: str = "") -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    done = subprocess.run(
        [TRULOOP, "--data-dir", str(tmp_path / "data"), *flags],
        input=stdin, capture_output=True, text=True, timeout=60, env=child_env(),
    )  # fmt: skip
    return done, time.monotonic() - began


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("flag", "url", "named"),
    [("--database-url", DEAD_POSTGRES, "PostgreSQL at postgresql://bob:***@127.0.0.1:1/truloop"),
     ("--redis-url", DEAD_REDIS, "Redis at redis://:***@127.0.0.1:1/0")],
)  # fmt: skip
def test_an_unreachable_store_stops_the_start(tmp_path: Path, transport: str, flag: str, url: str, named: str) -> None:
    done, took = _start(tmp_path, "--transport", transport, "--port", "0", flag, url, stdin=json.dumps(INIT) + "\n")
    assert done.returncode == 1 and took < 10, (done.returncode, took, done.stderr)
    assert f"cannot reach {named}" in done.stderr and flag in done.stderr and "--wait-for-store" in done.stderr
    assert SECRET_WORD not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # nothing was served


def test_wait_for_store_waits_for_it_then_serves(tmp_path: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="redis-") as workdir:
        redis = PrivateRedis(Path(workdir))
        later = threading.Timer(1.5, redis.start)  # comes up while the server waits
        later.start()
        try:
            done, _ = _start(
                tmp_path, "--redis-url", redis.url, "--wait-for-store", "20", stdin=json.dumps(INIT) + "\n"
            )
        finally:
            later.join()
            redis.stop()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"]
    assert "waiting for Redis" in done.stderr


def test_wait_for_store_gives_up_after_its_time(tmp_path: Path) -> None:
    done, took = _start(tmp_path, "--redis-url", DEAD_REDIS, "--wait-for-store", "2")
    assert done.returncode == 1 and 1.5 <= took < 12, (took, done.stderr)
    assert "after waiting 2 s" in done.stderr and SECRET_WORD not in done.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/d", "postgresql://u:***@h:5432/d"),
        ("postgresql://h/d?user=u&password=pw&sslmode=require", "postgresql://h/d?user=u&password=***&sslmode=require"),
        ("redis://:pw@h:6379/0", "redis://:***@h:6379/0"),
        ("rediss://default:p%40ss@h/0", "rediss://default:***@h/0"),
        ("unix:///run/redis.sock?db=0", "unix:///run/redis.sock?db=0"),
        ("host=h dbname=d password=pw", "host=h dbname=d password=***"),
        ("postgresql://u@h/d", "postgresql://u@h/d"),
    ],
)
def test_masked_url(url: str, shown: str) -> None:
    assert masked_url(url) == shown
