"""The start-up speed paths: what was loaded frozen once the server is built, and HTTP on uvloop.

- Once the server is built, everything loaded moves to the permanent generation (`gc.freeze`), so the
  collections that run while serving never walk it again.
- A stdio server or `truloop-mcp call` that has closed everything leaves without tearing its ~700 modules down one
  by one (`leave`: the exit handlers run, the streams are flushed, then the process ends).
- HTTP runs on uvloop when it is installed (`pip install 'truloop-mcp[fast]'`); uvicorn then also picks
  httptools as its HTTP parser by itself.

(The collector paused while modules load is `server.runtime.cold_start`: it runs before the settings are read.)
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib.util
import logging
import os
import sys
from typing import Any


def freeze_loaded() -> None:
    """Move every object alive now to the permanent generation (before the collector is enabled again)."""
    gc.freeze()


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def event_loop_options() -> dict[str, Any]:
    """`anyio.run` options for the HTTP server: uvloop when installed."""
    return {"use_uvloop": True} if uvloop_installed() else {}


def leave(code: int = 0) -> None:
    """End the process now that everything is closed: the exit handlers (the audit log's last flush) run and the
    standard streams and log handlers are flushed, as at a normal exit; only the module teardown (~0.2 s) is skipped.
    """
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, or the stream closed
            stream.flush()
    os._exit(code)
