"""Tool authoring by the model (`--tools-dir DIR --tool-authoring`): the `custom_tools` toolset.

    list_custom_tools                    the folder's files, the tools loaded from them, their load errors
    tool_registry_status                 each file: its version, its state, its load error (verbatim)
    create_or_update_custom_tool_file    write a plugin file (a new tool is checked and tried before it serves;
                                         a new version of a served tool goes through the canary rollout)
    delete_custom_tool_file              remove a tool's files (kept under DIR/.history/)
    reload_custom_tools                  rescan the folder now, and check pending files again
    get_tool_feedback                    a tool's failed calls and canary holds and rollbacks (plugins/feedback.py)

The lifecycle of a file the model writes (files.py names them, ledger.py remembers where each tool is):

- a **new** tool is written as `NAME.py.pending`, which the plugin loader never loads ("disabled"). It is checked
  at once as `truloop-mcp tools check` would check it (import, `TOOL_SPEC`, schemas, its name), then rehearsed on
  fixed cases (rehearsal.py). Failing either, it stays pending and its state says why, word for word. Passing, it
  becomes `NAME.py` and serves **on trial**: its first `TRIAL_CALLS` calls must succeed; a trial call that fails
  (`handler_error` or `timeout`) sends the file back to `NAME.py.pending`, with the failure as its reason. After
  them it is `active`.
- a new version of a **served** tool is checked and rehearsed the same way and written as `NAME.canary.py`: the
  canary rollout routes a share of the calls to it and promotes or rolls it back by its rules; it never replaces the
  stable file directly. A version that fails the check is refused and nothing is written; one that fails its
  rehearsal is kept as `NAME.canary.py.pending`, never loaded.

Every action (and every trial outcome that moves a file) is an `authoring` line in the audit log.
"""

from toolsets.extensions.authoring.service import ToolAuthoring
from toolsets.extensions.authoring.tools import AUTHORING_TOOLS, AUTHORING_TOOLSET, authoring_toolset

__all__ = ["AUTHORING_TOOLS", "AUTHORING_TOOLSET", "ToolAuthoring", "authoring_toolset"]
