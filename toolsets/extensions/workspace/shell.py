"""`run_shell`'s guards and runner: a deny list, `--workspace-strict` rules, a time limit, an output cap.

Strict mode runs the command without a shell (split like a shell would, then executed directly), after
refusing shell metacharacters, `..`, absolute paths and paths whose real location is outside the
workspace. Either way the command runs in the workspace with a clean environment (a standard PATH,
HOME = the workspace), so nothing of the server's environment (its secrets) reaches it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from toolsets.extensions.workspace.paths import WorkspaceRefusal, within

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0
OUTPUT_CAP = 64 * 1024  # bytes kept of stdout and of stderr each
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The seed's deny list (`rm -rf`, `sudo`, `shutdown`, ...), matched as words anywhere in the command.
DENIED_WORDS = (
    "sudo", "su", "doas", "pkexec", "shutdown", "reboot", "halt", "poweroff", "telinit", "systemctl",
    "mkfs", "fdisk", "sfdisk", "parted", "wipefs", "dd", "shred", "mount", "umount", "chpasswd",
    "useradd", "userdel", "usermod", "visudo", "crontab", "iptables", "nft", "killall", "pkill",
)  # fmt: skip
_DENIED = re.compile(r"(?<![\w.-])(" + "|".join(DENIED_WORDS) + r")(?:\.\w+)?(?![\w-])")
_FORK_BOMB = re.compile(r":\s*\(\s*\)\s*\{")
_DEVICE_WRITE = re.compile(r">\s*/dev/(?!null\b|stdout\b|stderr\b)")
_DOT_DOT = re.compile(r"(^|[/=:,])\.\.($|[/:,])")  # also inside an option: --out=../x
_ABSOLUTE = re.compile(r"(^|[=:,])/")
STRICT_METACHARACTERS = frozenset(";&|<>()$`\\\"'*?[]{}!~#\n\r\t")


@dataclass(frozen=True, slots=True)
class ShellResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool


def refusal(command: str, root: Path, *, strict: bool) -> str | None:
    """Why `command` may not run, or None."""
    if not command.strip():
        return "The command is empty."
    if "\x00" in command:
        return "The command contains a NUL character."
    denied = _DENIED.search(command)
    if denied:
        return f"run_shell refuses '{denied.group(1)}' (deny list: {', '.join(DENIED_WORDS)})."
    if _rm_recursive_force(command):
        return "run_shell refuses 'rm -rf' (recursive forced removal); delete files one by one instead."
    if _FORK_BOMB.search(command) or _DEVICE_WRITE.search(command):
        return "run_shell refuses this command (a fork bomb or a write to a device)."
    if strict:
        return _strict_refusal(command, root)
    return None


def _rm_recursive_force(command: str) -> bool:
    for segment in re.split(r"[;&|\n()`]+", command):
        words = segment.split()
        for index, word in enumerate(words):
            if os.path.basename(word) != "rm":
                continue
            flags = [w for w in words[index + 1 :] if w.startswith("-")]
            short = "".join(f[1:] for f in flags if not f.startswith("--"))
            recursive = "r" in short or "R" in short or "--recursive" in flags
            force = "f" in short or "--force" in flags
            if recursive and force:
                return True
    return False


def _strict_refusal(command: str, root: Path) -> str | None:
    found = sorted({char for char in command if char in STRICT_METACHARACTERS})
    if found:
        shown = " ".join(repr(char) for char in found)
        return f"The server's strict workspace mode refuses shell metacharacters ({shown}); run one plain command."
    for word in command.split():
        if _DOT_DOT.search(word):
            return f"The server's strict workspace mode refuses '..' ({word!r})."
        if _ABSOLUTE.search(word):
            return f"The server's strict workspace mode refuses absolute paths ({word!r}); use relative paths."
        candidate = root / word
        if os.path.lexists(candidate) and not within(root, os.path.realpath(candidate)):
            return f"{word!r} leads outside the workspace folder (a symlink); refused."
    return None


async def run(command: str, root: Path, *, strict: bool, timeout_s: float) -> ShellResult:
    why = refusal(command, root, strict=strict)
    if why is not None:
        raise WorkspaceRefusal(why)
    argv = shlex.split(command) if strict else ["/bin/sh", "-c", command]
    env = {"PATH": PATH, "HOME": str(root), "PWD": str(root), "LANG": "C.UTF-8", "TERM": "dumb"}
    try:
        process = await anyio.open_process(argv, cwd=root, env=env, stdin=-3, start_new_session=True)
    except FileNotFoundError:
        raise WorkspaceRefusal(f"No such program: {argv[0]!r}.") from None
    outputs: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    truncated = False
    timed_out = False

    async def drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
        nonlocal truncated
        if stream is None:
            return
        async for chunk in stream:
            room = OUTPUT_CAP - len(into)
            if room > 0:
                into += chunk[:room]
            if len(chunk) > room:
                truncated = True  # keep reading (and dropping), so the command is not blocked on a full pipe

    async with process:
        with anyio.move_on_after(timeout_s) as deadline:
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, outputs["stdout"])
                tg.start_soon(drain, process.stderr, outputs["stderr"])
                await process.wait()
        if deadline.cancelled_caught:
            timed_out = True
            _kill_group(process.pid)
        with anyio.CancelScope(shield=True):
            await process.wait()
    return ShellResult(
        exit_code=None if timed_out else process.returncode,
        stdout=outputs["stdout"].decode(errors="replace"),
        stderr=outputs["stderr"].decode(errors="replace"),
        timed_out=timed_out,
        truncated=truncated,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
