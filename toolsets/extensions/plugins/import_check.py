"""A plugin version's first import, in a short-lived child process (import_child.py) that is killed when it
overruns or is no longer wanted.

Under `--plugin-isolation inprocess` a version is imported here first, and only imported in the server's own
process once this says it imports (and what its TOOL_SPEC is). A module-level busy loop or a `sleep(1e9)` then
costs a child process for at most the import limit, or until a newer version of the file supersedes it
(cancelling the check kills the child at once), instead of a server thread that spins for the life of the
process; a module that calls `os._exit` ends the child, not the server. The price: a Python start (~0.1 s) per
version loaded. The child gets the server's environment and `sys.path`, since the same code runs in the server
right after.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from toolsets.extensions.plugins.module import PluginImportError
from toolsets.extensions.plugins.source import PluginSource

CHILD = "from toolsets.extensions.plugins.import_child import main; main()"
MAX_ANSWER = 64 * 1024 * 1024
REAP_SECONDS = 5.0


async def check_import(source: PluginSource, module: str, seconds: float) -> dict[str, Any] | None:
    """Import `source` in a child within `seconds`: its raw TOOL_SPEC (None when it is not plain JSON data).
    Raises PluginImportError with the import's own message, or saying it overran or ended the process."""
    request = {"path": str(source.path), "source": source.text, "module": module, "sys_path": sys.path}
    process = await anyio.open_process(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        with anyio.fail_after(seconds):
            await process.stdin.send(json.dumps(request).encode() + b"\n")
            line = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", MAX_ANSWER)
    except TimeoutError:
        raise PluginImportError(f"importing it did not finish within {seconds:g} s") from None
    except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.DelimiterNotFound):
        code = await _ended(process, grace=1.0)  # it ended by itself, most likely: its own exit code
        raise PluginImportError(f"importing it ended the process (exit code {code})") from None
    finally:
        await _ended(process)  # done with it, overran, or superseded
    answer = json.loads(line)
    if answer.get("op") != "imported":
        raise PluginImportError(str(answer.get("message") or "the import check failed"))
    spec = answer.get("spec")
    return spec if isinstance(spec, dict) else None


async def _ended(process: Process, grace: float = 0.0) -> int | None:
    """Kill it (SIGKILL: a busy import ignores anything less) once `grace` is over, and reap it; its exit code."""
    if grace and process.returncode is None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(grace):
            await process.wait()
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_SECONDS):
        await process.wait()
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        await process.aclose()
    return process.returncode
