"""A client's capabilities as a task keeps them: the few flags a run reads (`ClientFlags`), and back.

A task's record never holds the client's capabilities object: a client may declare megabytes of
`capabilities.experimental`, and every task it made would carry them. A run reads only whether the client can be
asked, sampled, asked for roots, shown apps, and whether it declared tasks (server/tasks/ports.py,
bridge/elicitation.py, a plugin's `context.client_capabilities`): those are the flags, and a run sees them again.
"""

from __future__ import annotations

from typing import Any

from mcp.server.apps import EXTENSION_ID as APPS_EXTENSION

from server.tasks.wire import EXTENSION as TASKS_EXTENSION
from toolsets.infra.store.tasks import ClientFlags
from toolsets.views.app_views import APP_MIME_TYPE


def flags_of(capabilities: Any) -> ClientFlags:
    """The flags of a `ClientCapabilities` (None: a client that declared nothing)."""
    if capabilities is None:
        return ClientFlags()
    elicitation, sampling = capabilities.elicitation, capabilities.sampling
    extensions = capabilities.extensions if isinstance(capabilities.extensions, dict) else {}
    apps = extensions.get(APPS_EXTENSION)
    mime_types = apps.get("mimeTypes") if isinstance(apps, dict) else None
    return ClientFlags(
        # (an elicitation capability naming neither mode is form mode; one naming only `url` is URL mode only)
        elicit_form=elicitation is not None and (elicitation.form is not None or elicitation.url is None),
        elicit_url=elicitation is not None and elicitation.url is not None,
        sampling=sampling is not None,
        sampling_tools=sampling is not None and sampling.tools is not None,
        sampling_context=sampling is not None and sampling.context is not None,
        roots=capabilities.roots is not None,
        apps=isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types,
        tasks=TASKS_EXTENSION in extensions,
    )


def capabilities_of(flags: ClientFlags) -> dict[str, Any]:
    """The capabilities (as JSON) a task's run sees: what the flags say, and nothing else."""
    capabilities: dict[str, Any] = {}
    elicitation: dict[str, Any] = {
        **({"form": {}} if flags.elicit_form else {}),
        **({"url": {}} if flags.elicit_url else {}),
    }
    if elicitation:
        capabilities["elicitation"] = elicitation
    if flags.sampling:
        capabilities["sampling"] = {
            **({"tools": {}} if flags.sampling_tools else {}),
            **({"context": {}} if flags.sampling_context else {}),
        }
    if flags.roots:
        capabilities["roots"] = {}
    extensions = {
        **({APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}} if flags.apps else {}),
        **({TASKS_EXTENSION: {}} if flags.tasks else {}),
    }
    if extensions:
        capabilities["extensions"] = extensions
    return capabilities
