"""`run_shell` and `run_python` run in a bubblewrap sandbox, driven through the real transports (a stdio server
subprocess, and HTTP with `--workspace-http` and a JWT secret) with the real `bwrap`: nothing of the server is
visible from inside (its data folder, its environment, the home folder, the folders next to the workspace),
nothing outside the workspace is written, the network is off unless `--workspace-network`, nothing a command
starts outlives the call, strict mode is an allow-list, the server's secrets leave its environment at start,
and a machine without bwrap gets a clear error unless the operator chose `--workspace-unsandboxed`."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support import SECRET, TRULOOP, child_env, error_of, eventually, http_server_process, mcp_client, token
from toolsets.extensions.workspace import shell
from toolsets.infra.sandbox import SandboxConfig, WorkspaceSandbox

pytestmark = pytest.mark.anyio

NOTION = "ntn_canary_" + "n" * 24  # secret settings the server is started with; none may be read back
SUPERMEMORY = "sm_canary_" + "s" * 24
SECRETS = (SECRET, NOTION, SUPERMEMORY)
DATA_MARK = "data-folder-marker-41c2"
SIBLING_MARK = "sibling-folder-marker-9d0e"
HOME_MARK = "home-folder-marker-77ab"


@dataclass
class Site:
    """The workspace and, around it, what a command must neither read nor change."""

    workspace: Path
    outside: Path  # a sibling folder of the workspace
    data: Path  # the server's --data-dir
    home: Path  # the server's HOME

    def untouched(self) -> bool:
        return (
            sorted(os.listdir(self.outside)) == ["secret.txt"]
            and (self.outside / "secret.txt").read_text() == SIBLING_MARK
            and sorted(os.listdir(self.home)) == [".secret"]
            and not (self.data / "pwned.txt").exists()
        )


@pytest.fixture
def site(tmp_path: Path) -> Site:
    found = Site(tmp_path / "room", tmp_path / "outside", tmp_path / "data", tmp_path / "home")
    for folder in (found.workspace, found.outside, found.data, found.home):
        folder.mkdir()
    (found.workspace / "notes.txt").write_text("inside\n")
    (found.outside / "secret.txt").write_text(SIBLING_MARK)
    (found.data / "marker.txt").write_text(DATA_MARK)
    (found.home / ".secret").write_text(HOME_MARK)
    return found


def server_env(site: Site, **extra: str) -> dict[str, str]:
    return child_env(
        HOME=str(site.home), TRULOOP_JWT_SECRET=SECRET, NOTION_TOKEN=NOTION, SUPERMEMORY_API_KEY=SUPERMEMORY, **extra
    )


@dataclass
class Served:
    client: Client
    port: int | None  # the HTTP server's own port
    pid: int  # the server's process


def absent(*paths: Path) -> bool:
    return not any(path.exists() for path in paths)


def _pids(marker: str) -> list[int]:
    """Processes on this machine whose command line contains `marker` (the sandbox's included: they are
    in a child PID namespace, visible from here)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" "):
                    found.append(int(entry))
    return found


@contextlib.asynccontextmanager
async def served(site: Site, transport: str, *flags: str, env: dict[str, str] | None = None) -> AsyncIterator[Served]:
    args = ["--workspace", str(site.workspace), "--data-dir", str(site.data), "--confirm", "off", *flags]
    env = env or server_env(site)
    if transport == "stdio":
        params = StdioServerParameters(command=TRULOOP, args=args, env=env)
        async with Client(params, mode="legacy") as client:
            (pid,) = _pids(str(site.workspace))
            yield Served(client, None, pid)
        return
    with http_server_process("--workspace-http", *args, env=env) as (base, proc, _):
        async with mcp_client(base, token()) as client:
            yield Served(client, int(base.rsplit(":", 1)[1]), proc.pid)


async def run(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


def seen(result: dict[str, Any]) -> str:
    return result["stdout"] + result["stderr"]


def read_probes(site: Site) -> tuple[str, str]:
    """A shell command and a Python program that try to read everything the sandbox hides."""
    paths = [
        str(site.data / "marker.txt"),
        str(site.outside / "secret.txt"),
        "../outside/secret.txt",
        str(site.home / ".secret"),
        "/proc/1/environ",
    ]
    command = (
        f"cat {' '.join(paths)}; cat /proc/$PPID/environ; for p in /proc/[0-9]*/environ; do cat $p; done; "
        f"ls -a /root {site.home} {site.data} {Path.home()} /run /var/run; env; echo done"
    )
    code = (
        "import glob, os\n"
        f"for path in {paths!r} + glob.glob('/proc/[0-9]*/environ') + ['/proc/%d/environ' % os.getppid()]:\n"
        "    try:\n"
        "        print(path, open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(path, 'refused:', type(exc).__name__)\n"
        "print(sorted(os.environ.items()))\n"
        f"print(os.path.exists({str(site.home)!r}), os.path.exists({str(site.data)!r}), os.path.exists('/run'))\n"
    )
    return command, code


def nothing_leaked(output: str) -> bool:
    return not any(mark in output for mark in (DATA_MARK, SIBLING_MARK, HOME_MARK, *SECRETS, "TRULOOP"))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_nothing_of_the_server_is_readable_from_inside(site: Site, transport: str) -> None:
    command, code = read_probes(site)
    async with served(site, transport) as server:
        from_shell = await run(server.client, "run_shell", command=command)
        assert from_shell["stdout"].endswith("done\n") and nothing_leaked(seen(from_shell)), from_shell
        assert "No such file" in from_shell["stderr"]  # the paths do not even exist in there
        from_python = await run(server.client, "run_python", code=code)
        assert from_python["exit_code"] == 0 and nothing_leaked(seen(from_python)), from_python
        assert from_python["stdout"].rstrip().endswith("False False False")
        inside = await run(server.client, "run_python", code="import os; print(os.getcwd(), open('notes.txt').read())")
        assert inside["stdout"] == "/workspace inside\n\n"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_nothing_outside_the_workspace_is_written(site: Site, transport: str) -> None:
    host_tmp = Path("/tmp") / f"truloop-sandbox-probe-{uuid.uuid4().hex}"  # only ever checked, never created here
    targets = [site.outside / "new.txt", site.data / "pwned.txt", site.home / "new.txt", host_tmp, "/usr/pwned"]
    command = "; ".join(f"echo pwned > {target}" for target in targets) + "; echo pwned > ../outside/rel.txt; echo ok"
    code = (
        f"for path in {[str(t) for t in targets]!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('pwned')\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    async with served(site, transport) as server:
        result = await run(server.client, "run_shell", command=command)
        assert result["stdout"] == "ok\n" and len(result["stderr"].splitlines()) == len(targets), result
        result = await run(server.client, "run_python", code=code)
        assert result["exit_code"] == 0 and result["stdout"].count("Error") == len(targets) - 1  # /tmp: private
        written = await run(server.client, "run_shell", command="echo kept > made.txt && cat made.txt")
        assert written["stdout"] == "kept\n"
    assert site.untouched() and absent(host_tmp, Path("/usr/pwned"))
    assert (site.workspace / "made.txt").read_text() == "kept\n"


async def test_the_servers_own_port_is_reachable_only_with_workspace_network(site: Site) -> None:
    def dial(port: int) -> str:
        return (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).close(); print('connected')\n"
            "except OSError as exc:\n"
            "    print('refused', exc)\n"
        )

    async with served(site, "http") as server:
        assert server.port is not None
        result = await run(server.client, "run_python", code=dial(server.port))
        assert result["stdout"].startswith("refused"), result
        result = await run(server.client, "run_shell", command=f'python3 -I -c "{dial(server.port)}"')
        assert result["stdout"].startswith("refused"), result
    async with served(site, "http", "--workspace-network") as server:
        assert server.port is not None
        result = await run(server.client, "run_python", code=dial(server.port))
        assert result["stdout"] == "connected\n", result


async def test_nothing_a_command_starts_outlives_the_call(site: Site) -> None:
    tag = str(3100 + os.getpid() % 800)  # sleep durations no other test uses
    background = (
        f"setsid sleep {tag}1 >/dev/null 2>&1 & nohup sleep {tag}2 >/dev/null 2>&1 & (sleep {tag}3 &); echo started"
    )
    async with served(site, "stdio") as server:
        result = await run(server.client, "run_shell", command=background)
        assert result["stdout"] == "started\n"
        await eventually(lambda: not _pids(f"sleep {tag}"), 5)
        result = await run(server.client, "run_shell", command=f"setsid sleep {tag}4 & sleep {tag}5", timeout_s=1)
        assert result["timed_out"] is True and result["exit_code"] is None
        await eventually(lambda: not _pids(f"sleep {tag}"), 5)
        code = f"import subprocess; subprocess.Popen(['setsid', 'sleep', '{tag}6'], start_new_session=True); print(1)"
        result = await run(server.client, "run_python", code=code)
        assert result["stdout"] == "1\n"
        await eventually(lambda: not _pids(f"sleep {tag}"), 5)


async def test_a_cancelled_call_leaves_nothing_behind(site: Site) -> None:
    tag = str(3900 + os.getpid() % 90)
    sandbox = WorkspaceSandbox(SandboxConfig(site.workspace))
    with anyio.move_on_after(1.5) as scope:
        await shell.run(f"setsid sleep {tag}7 & sleep {tag}8", sandbox, strict=False, timeout_s=60)
    assert scope.cancelled_caught
    await eventually(lambda: not _pids(f"sleep {tag}"), 5)


async def test_strict_mode_is_an_allow_list(site: Site) -> None:
    async with served(site, "stdio", "--workspace-strict") as server:
        client = server.client
        await client.call_tool("write_file", {"path": "x.sh", "content": "cat /etc/hostname\n"})
        for command, why in (
            ("sh x.sh", "'sh' is not on it"),
            ("tar -C/ -cf x.tar etc/hostname", "'tar' is not on it"),
            ("python3 -c print(1)", "'python3' is not on it"),
            ("find . -exec sh x.sh +", "find -exec"),
            ("cp -t/tmp notes.txt", "absolute"),
        ):
            error = error_of(await client.call_tool("run_shell", {"command": command}))
            assert error["code"] == "forbidden" and why in error["reason"], (command, error)
        error = error_of(await client.call_tool("run_python", {"code": "print(1)"}))
        assert error["code"] == "forbidden" and "python3" in error["reason"]
        assert (await run(client, "run_shell", command="cat notes.txt"))["stdout"] == "inside\n"
        assert not (site.workspace / "x.tar").exists()
    async with served(site, "stdio", "--workspace-strict", "--workspace-allow", "python3") as server:
        assert (await run(server.client, "run_python", code="print(6 * 7)"))["stdout"] == "42\n"
        error = error_of(await server.client.call_tool("run_shell", {"command": "cat notes.txt"}))
        assert "'cat' is not on it" in error["reason"]  # the operator's list replaces the built-in one


async def test_the_servers_secrets_leave_its_environment_at_start(site: Site) -> None:
    async with served(site, "http") as server:
        assert (await run(server.client, "run_shell", command="true"))["exit_code"] == 0
        try:
            with open(f"/proc/{server.pid}/environ", "rb") as file:  # noqa: ASYNC230 - a small /proc file
                environ = file.read()
        except PermissionError:
            return  # non-dumpable, and this test is not privileged: nobody else can read it either
        assert b"HOME=" in environ  # the environment is there, without the secrets
        assert not any(secret.encode() in environ for secret in SECRETS)
        assert b"TRULOOP_JWT_SECRET" not in environ and b"NOTION_TOKEN" not in environ


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_without_bwrap_a_clear_error_unless_unsandboxed(site: Site, tmp_path: Path, transport: str) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = server_env(site, PATH=str(empty))  # a machine without bwrap
    async with served(site, transport, env=env) as server:
        for tool, arguments in (("run_shell", {"command": "echo hi"}), ("run_python", {"code": "print(1)"})):
            error = error_of(await server.client.call_tool(tool, arguments))
            assert error["code"] == "not_configured" and "install the `bubblewrap` package" in error["reason"]
            assert "--workspace-unsandboxed" in error["reason"]
    tag = str(3000 + os.getpid() % 90)
    async with served(site, transport, "--workspace-unsandboxed", env=env) as server:
        result = await run(server.client, "run_shell", command=f"sleep {tag}9 & env; pwd")
        assert nothing_leaked(seen(result)) and result["stdout"].endswith(f"{site.workspace}\n")
        await eventually(lambda: not _pids(f"sleep {tag}9"), 5)  # the process group is killed with the call
        assert (await run(server.client, "run_python", code="print(6 * 7)"))["stdout"] == "42\n"


async def test_a_data_folder_inside_the_workspace_is_hidden_from_commands(site: Site) -> None:
    inner = site.workspace / ".truloop"
    inner.mkdir()
    (inner / "marker.txt").write_text(DATA_MARK)
    async with served(site, "stdio", "--data-dir", str(inner)) as server:
        result = await run(server.client, "run_shell", command="ls -a .truloop; cat .truloop/marker.txt; echo x")
        assert DATA_MARK not in seen(result) and result["stdout"].endswith("x\n")
        result = await run(server.client, "run_shell", command="echo pwned > .truloop/marker.txt")
    assert (inner / "marker.txt").read_text() == DATA_MARK  # what was written went to an empty tmpfs


def test_the_guard_wipes_the_start_up_environment_block(site: Site) -> None:
    """What /proc/<pid>/environ shows is the block the process started with, whatever os.environ says: the
    guard zeroes the secrets there too (read by the process itself, which non-dumpable still allows)."""
    import subprocess
    import sys

    program = (
        "import ctypes, os; from server.auth.secrets_guard import guard_secrets; guard_secrets(); "
        "block = open('/proc/self/environ', 'rb').read(); "
        "print(sorted(set(os.environ) & {'TRULOOP_JWT_SECRET', 'NOTION_TOKEN', 'SUPERMEMORY_API_KEY'}), "
        f"[secret for secret in {SECRETS!r} if secret.encode() in block], b'KEPT=visible' in block, "
        "ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    )
    env = server_env(site, KEPT="visible")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[] [] True 0\n"  # no secret left, the rest kept, non-dumpable (PR_GET_DUMPABLE is 0)
