"""Custom tool plugins: Python files in the operator's tools folder (`--tools-dir`), published as tools.

A plugin file defines `TOOL_SPEC` (spec.py) and `run(input_data, context)`, or `create(context)` returning
an object with `run(...)` and optionally `close()`. The pieces, one job each:

- source.py: a file's bytes and content hash (the version); module.py: its entry points, from that text
- spec.py: `TOOL_SPEC` checked (JSON Schemas included) before anything is published
- context.py: the small `PluginContext` a plugin receives
- plugin_runner.py: what a version needs from whatever runs its code (`PluginRunner`)
- inprocess.py (+ plugin_loop.py) and process.py (+ worker.py): the two runners (`--plugin-isolation`);
  sandboxed.py starts process.py's worker inside bubblewrap (`sandbox`, and every file with tool authoring)
- nested.py: `context.call_tool`, a plugin's calls of other tools, back through the front door
- version.py: one loaded version of one file: its runner, its calls in flight, closed exactly once
- catalog.py: the folder scanned, changed files reloaded, versions published and retired (hot reload)
- import_check.py (+ import_child.py): a version's first import, in a child process killed if it hangs
- tool.py, toolset.py: what the profiles publish; changes.py: who hears that the published tools changed

Light on purpose: the worker process imports only source, module and context; the import check's child, only module.
"""
