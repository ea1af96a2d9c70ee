"""`--plugin-isolation sandbox` (and every file of a folder the model writes to): the worker in the plugin worker
sandbox (toolsets/infra/sandbox/plugin_worker.py, which says what it isolates and limits).

The worker process (worker.py, the same protocol as `--plugin-isolation process`) gets its own code (worker.py and
the few light modules it imports) as a zip through a pipe, and the plugin's source through the protocol, so
nothing of the project's folders needs to be visible. Wall time is the tool's `timeout_s` (the worker is killed past
it); output is the protocol's line cap and the stderr cap below.
"""

from __future__ import annotations

import io
import json
import zipfile
from functools import cache
from pathlib import Path

from anyio.abc import Process

from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox

ZIP_AT = "/opt/truloop/worker.zip"
STDERR_CAP = 256 * 1024  # bytes of a worker's stderr forwarded to the server's log; the rest is dropped
# The worker's code: these modules import only the standard library.
WORKER_MODULES = ("worker", "context", "failures", "module", "plugin_loop")
WORKER_INFRA = ("contained_open",)  # toolsets/infra/ modules it imports (context.open_data)
BOOT = (
    "import sys, json; sys.path[:0] = [{zip!r}]; sys.path += json.loads(sys.argv[1]); "
    "from toolsets.extensions.plugins.worker import main; main()"
)


@cache
def worker_zip() -> bytes:
    """worker.py and the modules it imports, as a zip the sandbox imports from (never the project's folder)."""
    here = Path(__file__).parent
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in ("toolsets", "toolsets/extensions", "toolsets/extensions/plugins", "toolsets/infra"):
            archive.writestr(f"{package}/__init__.py", "")
        for name in WORKER_MODULES:
            archive.writestr(f"toolsets/extensions/plugins/{name}.py", (here / f"{name}.py").read_text("utf-8"))
        infra = here.parent.parent / "infra"
        for name in WORKER_INFRA:
            archive.writestr(f"toolsets/infra/{name}.py", (infra / f"{name}.py").read_text("utf-8"))
    return buffer.getvalue()


def worker_program(sandbox: PluginWorkerSandbox) -> list[str]:
    """Python's arguments that boot the worker from its zip, the server's site-packages on its path."""
    _, _, sites = sandbox.interpreter
    return ["-c", BOOT.format(zip=ZIP_AT), json.dumps(list(sites))]


async def open_worker(sandbox: PluginWorkerSandbox) -> Process:
    """A worker process in a fresh sandbox, its stdin/stdout the protocol, its stderr a pipe."""
    return await sandbox.open_program(worker_program(sandbox), files={ZIP_AT: worker_zip()}, stderr=-1)
