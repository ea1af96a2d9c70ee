"""The child side of the import check (import_check.py): import one plugin version, say how it went, exit.

    python -c "from toolsets.extensions.plugins.import_child import main; main()"

In: one JSON line {path, source, module, sys_path}. Out: one JSON line, `imported` {spec} (the raw TOOL_SPEC, or
null when it is not plain JSON data) or `failed` {message} (module.py's message, word for word). The plugin's own
stdout goes to stderr (stdout is the answer). The child ends when its input ends, whatever the plugin's import is
doing, so a server that dies without killing it does not leave it spinning. Light on purpose: it imports only
module.py, so each check costs little more than a Python start.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO


def _exit_at_end_of_input(source: BinaryIO) -> None:
    while source.read(65536):
        pass
    os._exit(0)


def _answer(loaded_spec: dict[str, Any] | None, failure: str | None) -> bytes:
    if failure is not None:
        return json.dumps({"op": "failed", "message": failure}).encode() + b"\n"
    try:
        return json.dumps({"op": "imported", "spec": loaded_spec}, allow_nan=False).encode() + b"\n"
    except (TypeError, ValueError, RecursionError):
        return b'{"op":"imported","spec":null}\n'  # not JSON data: the in-process import judges it


def main() -> None:
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a plugin's print() goes to stderr, never into the answer
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    request = json.loads(protocol_in.readline())
    threading.Thread(target=_exit_at_end_of_input, args=(protocol_in,), daemon=True).start()
    sys.path[:] = request["sys_path"]  # the server's: the plugin finds what it would find in the server

    from toolsets.extensions.plugins.module import PluginImportError, import_plugin

    spec: dict[str, Any] | None = None
    failure: str | None = None
    try:
        spec = import_plugin(request["source"], Path(request["path"]), request["module"]).raw_spec
    except PluginImportError as exc:
        failure = str(exc)
    protocol_out.write(_answer(spec, failure))
    protocol_out.flush()
    os._exit(0)  # threads the plugin started, or its atexit handlers, never hold the answer's end


if __name__ == "__main__":
    main()
