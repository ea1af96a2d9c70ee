"""Secrets never stay where another process can read them: called once by the CLI after the settings are read.

`guard_secrets()` removes every secret setting's environment variable (`TRULOOP_JWT_SECRET`, `NOTION_TOKEN`,
`DATABASE_URL`, ...: each variable the settings model reads for a `SecretStr` field) from `os.environ` and from
the process's initial environment block, which `/proc/<pid>/environ` shows whatever `os.environ` says, and
marks the process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`), so a process of the same user can neither read
its `/proc/<pid>/environ` or memory nor attach a debugger. The values live on only in the settings object.
Linux only; elsewhere the variables are removed from `os.environ` and nothing more.
"""

from __future__ import annotations

import logging
import os
import sys
import typing

from pydantic import SecretStr

from server.settings import Settings, source_of

PR_SET_DUMPABLE = 4
logger = logging.getLogger("truloop.secrets")


def secret_variables() -> tuple[str, ...]:
    """The environment variables of every secret setting."""
    names = []
    for field in Settings.model_fields.values():
        annotation = field.annotation
        kinds = (annotation, *typing.get_args(annotation))
        if SecretStr in kinds:
            env = source_of(field).env
            if env:
                names.append(env)
    return tuple(names)


def guard_secrets() -> None:
    names = secret_variables()
    present = [name for name in names if name in os.environ]
    for name in present:
        del os.environ[name]  # also unsetenv(): the C library's environment forgets it
    if sys.platform != "linux":
        return
    import posix

    for name in present:
        posix.environ.pop(name.encode(), None)  # the interpreter's own copy of the start-up environment
    try:
        import ctypes

        _wipe_initial_environment(ctypes, {name.encode() for name in names})
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, ValueError, AttributeError) as exc:  # an exotic /proc or libc: os.environ is clean anyway
        logger.debug("could not scrub the initial environment: %s", exc)


def _wipe_initial_environment(ctypes: typing.Any, names: set[bytes]) -> None:
    """Zero each `NAME=value` of `names` in the environment block the kernel gave the process (what
    /proc/<pid>/environ reads). Nothing points there any more once the variables are unset."""
    with open("/proc/self/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])  # env_start, env_end: fields 50 and 51 of proc(5)
    with open("/proc/self/environ", "rb") as environ:
        block = environ.read()
    if not start or end - start != len(block) or ctypes.string_at(start, len(block)) != block:
        raise ValueError("the environment block is not where /proc/self/stat says")
    offset = 0
    for entry in block.split(b"\0"):
        if entry.split(b"=", 1)[0] in names:
            ctypes.memset(start + offset, 0, len(entry))
        offset += len(entry) + 1
