"""`truloop-mcp dev`: this server under the MCP Inspector's web UI. What can be held without a browser: the command
it runs (`--print`, and a stand-in `npx` that records its arguments), and the one line when Node.js is missing."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import TRULOOP, child_env

pytestmark = pytest.mark.timeout(60)

PINNED = "@modelcontextprotocol/inspector@0.15.0"


def dev(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRULOOP, "dev", *args], cwd=cwd, capture_output=True, text=True, timeout=30, env=child_env(**env)
    )


def test_print_shows_the_pinned_inspector_on_this_installations_server(tmp_path: Path) -> None:
    done = dev("--print", "--demo", "--data-dir", "store", "--user", "me", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    npx = shutil.which("npx") or "npx"
    expected = [npx, "-y", PINNED, TRULOOP, "--demo", "--user", "me", "--data-dir", str(tmp_path / "store")]
    assert shlex.split(done.stdout) == expected
    assert not (tmp_path / "store").exists()  # printing creates nothing


def test_without_a_data_dir_the_default_folder_is_passed(tmp_path: Path) -> None:
    data_home = tmp_path / "xdg"
    done = dev("--print", cwd=tmp_path, XDG_DATA_HOME=str(data_home))
    assert shlex.split(done.stdout)[-2:] == ["--data-dir", str(data_home / "truloop")]


def test_it_runs_the_inspector_and_passes_on_its_exit_status(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    npx = folder / "npx"
    npx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path / "args"}\nexit 3\n')
    npx.chmod(0o755)
    done = dev("--demo", "--data-dir", str(tmp_path / "data"), cwd=tmp_path, PATH=f"{folder}:/usr/bin:/bin")
    assert done.returncode == 3
    assert (tmp_path / "args").read_text().splitlines() == [
        "-y", PINNED, TRULOOP, "--demo", "--data-dir", str(tmp_path / "data"),
    ]  # fmt: skip
    assert "open http://localhost:6274" in done.stderr


def test_without_npx_it_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = dev("--demo", cwd=tmp_path, PATH=str(empty))
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("truloop-mcp: error: npx is not on PATH: the MCP Inspector runs on Node.js 20 or newer")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--no-such-flag",), "unrecognized arguments: --no-such-flag"),
        (("--transport", "http"), "dev starts the server on stdio"),
    ],
)
def test_bad_server_flags_are_refused_first(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = dev(*args, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_help_documents_it(tmp_path: Path) -> None:
    own = dev("--help", cwd=tmp_path)
    assert own.returncode == 0 and "MCP Inspector's web UI" in own.stdout and "--print" in own.stdout
    listed = subprocess.run([TRULOOP, "--help"], capture_output=True, text=True, timeout=30, env=child_env())
    assert "truloop-mcp dev [--print] [SERVER FLAGS]" in listed.stdout
