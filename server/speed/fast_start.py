"""The start-up speed paths: what was loaded frozen once the server is built, and HTTP on uvloop.

- Once the server is built, everything loaded moves to the permanent generation (`gc.freeze`), so the
  collections that run while serving never walk it again.
- HTTP runs on uvloop when it is installed (`pip install 'truloop-mcp[fast]'`); uvicorn then also picks
  httptools as its HTTP parser by itself.

(The collector paused while modules load is `server.fast_start`: it runs before the settings are read.)
"""

from __future__ import annotations

import gc
import importlib.util
from typing import Any


def freeze_loaded() -> None:
    """Move every object alive now to the permanent generation (before the collector is enabled again)."""
    gc.freeze()


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def event_loop_options() -> dict[str, Any]:
    """`anyio.run` options for the HTTP server: uvloop when installed."""
    return {"use_uvloop": True} if uvloop_installed() else {}
