"""The environment a child process of the server starts with: a small fixed set of names, never `os.environ`.

The server's environment may hold secrets (tokens, database URLs with passwords); a plugin worker or a
workspace command gets only what it needs to run (the program search path, the locale, the time zone).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Names passed on from the server's own environment when set: none of them is a setting, so none is a secret.
PASSED_ON = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "PYTHONPATH")


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The passed-on names that are set (PATH defaults to the system's), then `extra`."""
    env = {name: os.environ[name] for name in PASSED_ON if os.environ.get(name)}
    env.setdefault("PATH", SYSTEM_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra or {})
    return env
