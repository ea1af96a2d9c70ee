"""A newcomer's mistakes at start, each answered by one line: a data folder that cannot be made, a log level in
lower case, a misspelt subcommand."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import INIT, TRULOOP, child_env, http_server_process

pytestmark = pytest.mark.timeout(60)


def run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRULOOP, *args], input=stdin, capture_output=True, text=True, timeout=30, env=child_env(**env)
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_data_folder_that_cannot_be_made_stops_the_start(transport: str) -> None:
    done = run("--transport", transport, "--port", "0", "--data-dir", "/proc/nope", stdin=json.dumps(INIT) + "\n")
    assert done.returncode == 1, done
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("truloop-mcp: error: cannot create the data folder /proc/nope (--data-dir")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("flag", "env"), [(("--log-level", "debug"), {}), ((), {"TRULOOP_LOG_LEVEL": "info"})])
def test_the_log_level_is_taken_in_any_case(flag: tuple[str, ...], env: dict[str, str], tmp_path: Path) -> None:
    done = run(*flag, "--data-dir", str(tmp_path / "data"), stdin=json.dumps(INIT) + "\n", **env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == "init"
    assert "error" not in done.stderr


def test_a_bad_log_level_is_quoted_as_typed() -> None:
    done = run("--log-level", "loud")
    assert done.returncode == 2
    assert done.stderr == (
        "truloop-mcp: error: --log-level / TRULOOP_LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR; got 'loud'\n"
    )


def test_the_http_server_takes_a_lower_case_log_level(tmp_path: Path) -> None:
    with http_server_process("--log-level", "info", "--data-dir", str(tmp_path / "data")) as (_, _, log):
        assert " INFO " in log.read_text()


@pytest.mark.parametrize(
    ("word", "line"),
    [
        ("tokn", "unknown command 'tokn'; did you mean 'token'? (see --help)"),
        ("instal", "unknown command 'instal'; did you mean 'install'? (see --help)"),
        ("frobnicate", "unknown command 'frobnicate'; the commands are users, notion,"),
    ],
)
def test_an_unknown_subcommand_names_the_closest(word: str, line: str) -> None:
    done = run(word, "--user", "x")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"truloop-mcp: error: {line}"), done.stderr
    assert len(done.stderr.splitlines()) == 1
