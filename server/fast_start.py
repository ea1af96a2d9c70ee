"""Cold start and the event loop: what the server does before and after its ~600 modules load.

- No garbage-collection passes while modules load: importing allocates hundreds of thousands of
  objects and frees almost none, so each pass is wasted work (~180 of them for `import mcp.server`).
  Once the server is built, everything loaded moves to the permanent generation (`gc.freeze`), so
  the collections that run while serving never walk it again.
- No scan of every installed distribution's entry points for pydantic plugins (the server uses none).
- HTTP runs on uvloop when it is installed (`pip install 'truloop-mcp[fast]'`); uvicorn then also
  picks httptools as its HTTP parser by itself.
"""

from __future__ import annotations

import gc
import importlib.util
import os
from typing import Any


def before_imports() -> None:
    """The first thing the server does (not the short subcommands, which keep the collector on)."""
    # written, never read: pydantic reads it when its first model class is built
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    gc.disable()


def after_imports() -> None:
    """The server is built: freeze what was loaded, and collect garbage again from here on."""
    gc.freeze()
    gc.enable()


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def http_backend_options() -> dict[str, Any]:
    """`anyio.run` options for the HTTP server: uvloop when installed."""
    return {"use_uvloop": True} if uvloop_installed() else {}
