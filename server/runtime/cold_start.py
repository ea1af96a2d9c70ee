"""Cold start: what the server does before its ~600 modules load, and after.

- No garbage-collection passes while modules load: importing allocates hundreds of thousands of
  objects and frees almost none, so each pass is wasted work (~180 of them for `import mcp.server`).
- No scan of every installed distribution's entry points for pydantic plugins (the server uses none).

Both happen before the settings are read (server/cli/__init__.py), so `fast_paths` cannot switch them; they change
no behaviour. What the switch does govern at start (freezing what was loaded, uvloop) is in
`server.speed.frozen_start`.
"""

from __future__ import annotations

import gc
import os


def before_imports() -> None:
    """The first thing the server does (not the short subcommands, which keep the collector on)."""
    # written, never read: pydantic reads it when its first model class is built
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    gc.disable()


def after_imports() -> None:
    """The server is built: collect garbage again from here on."""
    gc.enable()
