"""What `run_shell` and `run_python` may run: the deny list, `--workspace-strict`'s allow-list and rules, the limits.

The sandbox (sandbox.py) is the boundary; these checks come first and refuse what is plainly unwanted. Strict
mode adds an allow-list of programs: the first word of the command (and of every part of a pipeline or a
`;`/`&&`/`||` list) must be on it, so no interpreter (sh, python, ...) runs unless the operator lists it;
options of listed programs that run other programs (`find -exec`, `sort --compress-program`) are refused,
and so are shell metacharacters, `..`, absolute paths and arguments that lead outside through a symlink.
A strict command runs without a shell.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection
from pathlib import Path

from toolsets.extensions.workspace.paths import WorkspaceRefusal, within
from toolsets.infra.sandbox.workspace import OUTPUT_CAP as OUTPUT_CAP
from toolsets.infra.sandbox.workspace import RunResult, WorkspaceSandbox

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0
MAX_CODE_BYTES = 100_000  # run_python's source, passed as one argument (the kernel's limit is 128 KiB)

# The seed's deny list (`rm -rf`, `sudo`, `shutdown`, ...), matched as words anywhere in the command.
DENIED_WORDS = (
    "sudo", "su", "doas", "pkexec", "shutdown", "reboot", "halt", "poweroff", "telinit", "systemctl",
    "mkfs", "fdisk", "sfdisk", "parted", "wipefs", "dd", "shred", "mount", "umount", "chpasswd",
    "useradd", "userdel", "usermod", "visudo", "crontab", "iptables", "nft", "killall", "pkill",
)  # fmt: skip
# Strict mode's default allow-list: programs that read, compare and write files and run nothing else.
# Left out on purpose, because each can run another program: sh/bash/python/perl/..., sed (`e`), awk
# (`system()`), xargs, env, nice, timeout, nohup, tar (`--to-command`), split (`--filter`), git (hooks,
# aliases), vi/less (shell escapes), make.
DEFAULT_ALLOWED_PROGRAMS = (
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "wc", "sort", "uniq", "cut", "tr", "paste", "join",
    "comm", "nl", "fold", "tac", "rev", "expand", "unexpand", "find", "mkdir", "rmdir", "cp", "mv", "rm", "touch",
    "echo", "printf", "diff", "cmp", "stat", "du", "file", "basename", "dirname", "realpath", "readlink", "pwd",
    "date", "true", "false", "seq", "md5sum", "sha1sum", "sha256sum", "sha512sum", "base64", "od",
)  # fmt: skip
# Options of allowed programs that run another program (or write where the arguments do not say).
RUNNING_OPTIONS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("--compress-program",),
}
_DENIED = re.compile(r"(?<![\w.-])(" + "|".join(DENIED_WORDS) + r")(?:\.\w+)?(?![\w-])")
_FORK_BOMB = re.compile(r":\s*\(\s*\)\s*\{")
_DEVICE_WRITE = re.compile(r">\s*/dev/(?!null\b|stdout\b|stderr\b)")
_DOT_DOT = re.compile(r"(^|[/=:,])\.\.($|[/:,])")  # also inside an option: --out=../x
_ABSOLUTE = re.compile(r"(^|[=:,]|^-\w+)/")  # also glued to a short option: -C/ or -t/tmp
_SEPARATORS = re.compile(r"\|\||&&|\$\(|[|;&\n()`]")
STRICT_METACHARACTERS = frozenset(";&|<>()$`\\\"'*?[]{}!~#\n\r\t")


def refusal(
    command: str, root: Path, *, strict: bool, allowed: Collection[str] = DEFAULT_ALLOWED_PROGRAMS
) -> str | None:
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
        return _unlisted(command, allowed) or _strict_refusal(command, root)
    return None


def python_refusal(*, strict: bool, allowed: Collection[str]) -> str | None:
    """Why `run_python` may not run, or None: strict mode runs it only when the operator listed python3."""
    if strict and "python3" not in allowed:
        return (
            "The server's strict workspace mode runs only the programs on its allow-list, and python3 is not on "
            "it (the operator can add it with --workspace-allow python3)."
        )
    return None


def _unlisted(command: str, allowed: Collection[str]) -> str | None:
    for part in _SEPARATORS.split(command):
        words = part.split()
        if not words:
            continue
        program = words[0]
        if program not in allowed:
            return (
                f"The server's strict workspace mode runs only the programs on its allow-list, and {program!r} is "
                f"not on it (allowed: {', '.join(sorted(allowed))})."
            )
        for option in RUNNING_OPTIONS.get(program, ()):
            if any(word == option or word.startswith(option + "=") for word in words[1:]):
                return f"The server's strict workspace mode refuses '{program} {option}' (it runs another program)."
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


async def run(
    command: str,
    sandbox: WorkspaceSandbox,
    *,
    strict: bool,
    timeout_s: float,
    allowed: Collection[str] = DEFAULT_ALLOWED_PROGRAMS,
) -> RunResult:
    why = refusal(command, sandbox.workspace, strict=strict, allowed=allowed)
    if why is not None:
        raise WorkspaceRefusal(why)
    argv = shlex.split(command) if strict else ["/bin/sh", "-c", command]
    return await sandbox.run(argv, timeout_s=timeout_s)


async def run_python(
    code: str,
    sandbox: WorkspaceSandbox,
    *,
    strict: bool,
    timeout_s: float,
    allowed: Collection[str] = DEFAULT_ALLOWED_PROGRAMS,
) -> RunResult:
    why = python_refusal(strict=strict, allowed=allowed)
    if why is not None:
        raise WorkspaceRefusal(why)
    if "\x00" in code:
        raise WorkspaceRefusal("The code contains a NUL character.")
    if len(code.encode()) > MAX_CODE_BYTES:
        raise WorkspaceRefusal(
            f"The code is longer than {MAX_CODE_BYTES} bytes; write it to a file with write_file and run "
            "it with run_python('exec(open(\"file.py\").read())')."
        )
    return await sandbox.run(["python3", "-I", "-c", code], timeout_s=timeout_s)
