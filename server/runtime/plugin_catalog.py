"""The one way a plugin catalog is built from the settings: the server's, and the `tools` and `canary` commands'.

Where the tools folder's code runs follows the settings (`Settings.effective_plugin_isolation`): a folder the
model writes to (`--tool-authoring`) is imported and run only inside the sandbox, by the server and by the
commands that check or list it alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.extensions.plugins.feedback import FeedbackRecorder
    from toolsets.pipeline.canary.router import CanarySetup


def plugin_catalog(
    settings: Settings, feedback: FeedbackRecorder | None = None, canary: CanarySetup | None = None
) -> PluginCatalog:
    """The catalog of `settings.tools_dir` (built with no folder when there is none: a file can still be
    checked, in the sandbox when the settings ask for one); `feedback`: the server's recorder
    (server/runtime/feedback_recorder.py); `canary`: the server's canary store, key and audit (None: the commands'
    catalogs, whose canary router nobody asks)."""
    from toolsets.extensions.plugins.catalog import PluginCatalog, PluginConfig
    from toolsets.profiles import reserved_tool_names
    from toolsets.views.prompt_catalog import PROMPTS

    prompts = [prompt.name for prompt in PROMPTS]
    folder = settings.tools_dir
    isolation = settings.effective_plugin_isolation
    config = (
        PluginConfig(folder, settings.data_dir / "plugins", isolation, max_resource_bytes=settings.max_resource_bytes)
        if folder is not None
        else None
    )
    return PluginCatalog(
        reserved=reserved_tool_names,
        reserved_prompts=prompts,
        feedback=feedback,
        config=config,
        sandbox=settings.plugin_sandbox(),
        canary=canary,
    )


def refuse_without_sandbox(settings: Settings) -> None:
    """At start: where the tools folder must run in the sandbox and the sandbox cannot run here, one line naming
    the fix and exit 2 (never a silent fallback to running the code unsandboxed)."""
    problem = sandbox_problem(settings)
    if problem is not None:
        from server.cli.shared import fail

        fail(problem)


def sandbox_problem(settings: Settings) -> str | None:
    """Why the tools folder or code mode's programs cannot run as `settings` ask (they ask for the sandbox, and it
    cannot start here)."""
    from toolsets.infra.sandbox import SandboxUnavailable

    sandbox = settings.plugin_sandbox() if settings.tools_dir is not None else None
    if sandbox is not None:
        try:
            sandbox.probe()
        except SandboxUnavailable as exc:
            why = "--tool-authoring runs the tools the model writes" if settings.tool_authoring else "plugins run"
            return f"{why} only inside the plugin sandbox, and it cannot start here: {exc}"
    programs = settings.code_sandbox()
    if programs is not None:
        try:
            programs.probe()
        except SandboxUnavailable as exc:
            return f"--code-mode runs the model's programs only inside the sandbox, and it cannot start here: {exc}"
    return None
