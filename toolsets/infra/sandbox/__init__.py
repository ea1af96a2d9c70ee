"""The server's one bubblewrap sandbox, with two profiles (docs/security.md says what each isolates):

- config.py: `SandboxConfig`, `Limits` (and each profile's own), `SandboxUnavailable` (the refusal naming the fix)
- bwrap.py: the command builder both profiles share (namespaces, system folders, /etc, the server's files
  covered, the environment, the options' pipe)
- workspace.py: `WorkspaceSandbox`, where `run_shell` and `run_python` run: the workspace folder writable at
  /workspace, the network only when allowed, a process cap per call
- pids_cgroup.py: how the workspace's process cap binds when the server runs as root
- plugin_worker.py: `PluginWorkerSandbox`, where plugin workers and code mode's programs run: no data folder, no
  network unless allowed, an unprivileged uid, the plugin limits
"""

from toolsets.infra.sandbox.config import (
    PLUGIN_WORKER_LIMITS,
    WORKSPACE_LIMITS,
    Limits,
    SandboxConfig,
    SandboxUnavailable,
)
from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox
from toolsets.infra.sandbox.workspace import RunResult, WorkspaceSandbox

__all__ = [
    "PLUGIN_WORKER_LIMITS",
    "WORKSPACE_LIMITS",
    "Limits",
    "PluginWorkerSandbox",
    "RunResult",
    "SandboxConfig",
    "SandboxUnavailable",
    "WorkspaceSandbox",
]
