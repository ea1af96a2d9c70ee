"""What a person who starts the stdio server in a terminal sees: a few lines on stderr (stdout is the protocol)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TextIO


def executable() -> str:
    """The absolute path of the running `truloop-mcp` (what a host's config should name)."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0 and os.path.basename(argv0) != "__main__.py":
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found:
            return os.path.abspath(found)
    beside = os.path.join(os.path.dirname(sys.executable), "truloop-mcp")
    return beside if os.path.exists(beside) else f"{sys.executable} -m server"


def greet_terminal(stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
    """When stdin is a terminal, say what this is and how to add it to a host; otherwise say nothing."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    try:
        if stdin is None or not stdin.isatty():
            return
    except (ValueError, OSError):  # a closed or odd stdin: not a person at a terminal
        return
    stderr.write(
        "truloop-mcp: an MCP server speaking JSON-RPC on stdin/stdout; an MCP host (Claude, VS Code, Cursor) "
        "starts it for you.\n"
        f'Add it to a host (README, "Add it to a host"), e.g.: claude mcp add truloop -- {executable()}\n'
        "Waiting for JSON-RPC on stdin; Ctrl-C to quit.\n"
    )
    stderr.flush()
