"""Install without cloning: the wheel built from the repository holds every file the server needs, and once
installed into a fresh virtual environment its `truloop-mcp --demo`, started from a folder outside the
repository, answers initialize, a tool call and the read of an MCP App (an HTML file shipped as package data).

The build and the install download nothing: the wheel is built without build isolation (setuptools comes with
the dev extra), installed with `--no-deps --no-index`, and the new environment sees its dependencies through a
.pth file naming this environment's site-packages (appended after its own, so the wheel's packages come first;
this environment's editable install is a finder that the .pth does not load).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support import child_env

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("server", "toolsets", "bridge")
STEP_TIMEOUT = 60


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = child_env(HOME=str(cwd))  # the build's tools leave their settings (pip's, rustup's) in the test's folder
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=STEP_TIMEOUT, env=env)
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _source_files() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path / "dist"
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        ".",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(dist),
        cwd=source,
    )
    (wheel,) = dist.glob("truloop_mcp-*-py3-none-any.whl")
    return wheel


def _install(wheel: Path, venv: Path) -> Path:
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=venv.parent)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel),
         cwd=venv.parent)  # fmt: skip
    site = Path(
        _run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=venv).stdout.strip()
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "dev_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    return venv / "bin" / "truloop-mcp"


def test_the_wheel_installs_and_serves_from_outside_the_repository(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert _source_files() <= shipped, sorted(_source_files() - shipped)  # every module and data file
    assert {"toolsets/views/apps/event.html", "toolsets/views/apps/shared.js", "server/py.typed"} <= shipped

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    command = _install(wheel, tmp_path / "venv")
    where = _run(str(tmp_path / "venv" / "bin" / "python"), "-c", "import server, toolsets; print(toolsets.__file__)",
                 cwd=outside).stdout  # fmt: skip
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel's copy, not the repository's

    env = child_env(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("PYTHONPATH", None)
    params = StdioServerParameters(command=str(command), args=["--demo"], env=env, cwd=str(outside))

    async def session() -> tuple[str, str, str]:
        with anyio.fail_after(45):
            async with Client(params) as client:
                called = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
                app = await client.read_resource("ui://truloop/event.html")
                day = getattr(called.content[0], "text", "")
                html = getattr(app.contents[0], "text", "")
                return (client.server_info.name if client.server_info else ""), day, html

    name, day, html = anyio.run(session)
    assert "truloop" in name.lower() and "Tuesday" in day
    assert html.lower().startswith("<!doctype html>") and "/*truloop:shared.js*/" not in html  # shared files inlined
