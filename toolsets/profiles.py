"""Named profiles: compositions of toolsets and wrappers, never copied lists of tools.

`build_profiles(...)` is the one place where policy is composed, and it returns a value: the composition
root (server/runtime/composition.py, or `toolsets.assembly` in-process) calls it once per deployment and passes the
result down. Nothing here is kept between calls, so two deployments in one process share nothing.
From the outside in: middleware (metrics, canary, audit, tracing, gates, plugin feedback) -> confirmation of
destructive tools -> the toolsets themselves (a deferred tool's answer comes from the user's side).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from toolsets.core.combined import CombinedToolset
from toolsets.core.deferred import DeviceTools, device_only
from toolsets.core.filtered import FilteredToolset
from toolsets.core.middleware import Middleware, MiddlewareToolset
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset
from toolsets.pipeline.approval import ApprovalRequiredToolset
from toolsets.profile_names import PROFILE_NAMES
from toolsets.views.app_views import AVAILABILITY, CONFIRM, EVENT, App

if TYPE_CHECKING:
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.pipeline.audit.writer import AuditSink
    from toolsets.pipeline.call_metrics import CallRecorder
    from toolsets.pipeline.feedback_middleware import PluginTrials
    from toolsets.pipeline.gates.spec import GateSet

Exposure = Literal["full", "progressive", "code"]

# An allow-list: agents composing notifications must not create events, look users up or send messages, and
# a toolset added to `member` later stays out until it is listed here.
NOTIFICATION_SAFE = frozenset({"datetime", "knowledge", "interaction", "permission", "places", "memory"})


# MCP Apps (toolsets/views/app_views.py): which tool's call a host that renders apps shows as which app. A guest's
# event is one that collects their availability; every destructive tool shows the confirmation card.
TOOL_APPS: Mapping[str, App] = {
    "update_guest_availability": AVAILABILITY,
    "get_event_details": AVAILABILITY,
    "list_invited_events": EVENT,
    "get_events": EVENT,
    "create_event": EVENT,
    "update_event": EVENT,
}


def app_of(tool: Tool) -> App | None:
    """The app a host that renders apps shows for `tool`'s calls (None: text only)."""
    return TOOL_APPS.get(tool.name) or (CONFIRM if tool.hints.destructive else None)


@dataclass(frozen=True, slots=True)
class Extensions:
    """What a deployment adds to the assistant's toolsets."""

    plugins: PluginCatalog | None = None  # the tools folder's plugins (--tools-dir)
    workspace: AbstractToolset | None = None  # the workspace toolset, where the deployment publishes it
    authoring: AbstractToolset | None = None  # the custom_tools toolset (--tool-authoring), member only
    code: AbstractToolset | None = None  # the code toolset (`execute_code`: --code-mode), member
    code_for_guests: bool = False  # --code-mode-guests: guests get it too (their programs reach guest tools only)
    trials: PluginTrials | None = None  # the authoring tools' trials, told of each plugin call (FeedbackMiddleware)


NO_EXTENSIONS = Extensions()


class Profiles(Mapping[str, AbstractToolset]):
    """The composed profiles of one deployment, by name."""

    def __init__(self, composed: Mapping[str, AbstractToolset]) -> None:
        self._composed = dict(composed)

    def __getitem__(self, name: str) -> AbstractToolset:
        return self._composed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._composed)

    def __len__(self) -> int:
        return len(self._composed)

    def profile(self, name: str) -> AbstractToolset:
        try:
            return self._composed[name]
        except KeyError:
            raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}") from None

    @cached_property
    def device_tools(self) -> DeviceTools:
        """The deferred tools of every profile, for the device routes."""
        return DeviceTools(self.values())


def with_policy(toolset: AbstractToolset, middleware: Sequence[Middleware] = ()) -> AbstractToolset:
    return MiddlewareToolset(ApprovalRequiredToolset(toolset), middleware)


def standard_middleware(
    *,
    audit: AuditSink | None = None,
    gates: GateSet | None = None,
    plugins: PluginCatalog | None = None,
    metrics: CallRecorder | None = None,
    trials: PluginTrials | None = None,
    version: str | None = None,
) -> list[Middleware]:
    """The deployment's own middleware instances, outermost first: the metrics time the whole pipeline and count
    every outcome; the canary picks a plugin call's version before the audit line that names it; the audit log sees
    every outcome; the span covers the gates' answer too; the plugin feedback hears what a plugin call gave back (its
    failures kept, a trial's calls counted). A new kind of middleware is a class in `toolsets/pipeline/`
    and one line here (or, for an embedder, an entry of `assemble(..., middleware=[...])`, which go inside these)."""
    from toolsets.pipeline.tracing import TracingMiddleware

    chain: list[Middleware] = []
    if metrics is not None:
        from toolsets.pipeline.call_metrics import MetricsMiddleware

        chain.append(MetricsMiddleware(metrics))
    if plugins is not None:
        from toolsets.pipeline.canary.canary_middleware import CanaryMiddleware

        chain.append(CanaryMiddleware(plugins))
    if audit is not None:
        from toolsets.pipeline.audit.audit_middleware import AuditMiddleware

        chain.append(AuditMiddleware(audit, version))
    chain.append(TracingMiddleware())
    if gates:
        from toolsets.pipeline.gates.gate_middleware import GateMiddleware

        chain.append(GateMiddleware(gates))
    if plugins is not None and (plugins.feedback is not None or trials is not None):
        from toolsets.pipeline.feedback_middleware import FeedbackMiddleware

        chain.append(FeedbackMiddleware(plugins.feedback, trials))
    return chain


def assistant_toolsets(
    extensions: Extensions = NO_EXTENSIONS, exposure: Exposure = "full"
) -> dict[str, AbstractToolset]:
    """The member and guest toolsets before any policy (what gates are checked against)."""
    from toolsets.assistant.datetime_tools import datetime_toolset
    from toolsets.assistant.event_tools import event_toolset
    from toolsets.assistant.guest_tools import guest_toolset
    from toolsets.assistant.interaction_tools import interaction_toolset
    from toolsets.assistant.knowledge_tools import knowledge_toolset
    from toolsets.assistant.memory_tools import memory_toolset
    from toolsets.assistant.permission_tools import permission_toolset
    from toolsets.assistant.places_tools import places_toolset
    from toolsets.assistant.relay_tools import relay_toolset
    from toolsets.assistant.schedule_tools import schedule_toolset
    from toolsets.assistant.user_tools import user_toolset
    from toolsets.extensions.exposure.tools import exposure_for

    exposure_tools = exposure_for(exposure)
    member: list[AbstractToolset] = [
        datetime_toolset,
        user_toolset,
        knowledge_toolset,
        memory_toolset,
        places_toolset,
        relay_toolset,
        event_toolset,
        interaction_toolset,
        permission_toolset,
        schedule_toolset,
        exposure_tools,
    ]
    guest: list[AbstractToolset] = [guest_toolset, exposure_tools]
    if extensions.workspace is not None:
        member.append(extensions.workspace)
    if extensions.authoring is not None:
        member.append(extensions.authoring)  # never guest; not in NOTIFICATION_SAFE either
    if extensions.code is not None:
        member.append(extensions.code)  # not in NOTIFICATION_SAFE: no program runs while composing a notification
        if extensions.code_for_guests:
            guest.append(extensions.code)
    if extensions.plugins is not None:
        from toolsets.extensions.plugins.toolset import PluginToolset

        member.append(PluginToolset(extensions.plugins, "member"))  # re-read whenever the catalog reloads
        guest.append(PluginToolset(extensions.plugins, "guest"))
    return {"member": CombinedToolset("member", *member), "guest": CombinedToolset("guest", *guest)}


def build_profiles(
    *,
    middleware: Sequence[Middleware] = (),
    extensions: Extensions = NO_EXTENSIONS,
    exposure: Exposure = "full",
    toolsets: Mapping[str, AbstractToolset] | None = None,
) -> Profiles:
    """member, notification-safe and guest, each wrapped once in the deployment's policy.

    `toolsets`: the bare compositions from `assistant_toolsets` when the caller already made them.
    """
    bare = toolsets if toolsets is not None else assistant_toolsets(extensions, exposure)
    member = with_policy(bare["member"], middleware)
    keep = _notification_safe if extensions.plugins is None else _notification_safe_or_offered
    notification_safe = FilteredToolset(member, keep, name="notification-safe")
    guest = with_policy(bare["guest"], middleware)
    profiles = Profiles({"member": member, "notification-safe": notification_safe, "guest": guest})
    _ = profiles.device_tools  # a deferred tool whose declaration does not fit stops the deployment here
    return profiles


def without_device_only_tools(toolsets: Mapping[str, AbstractToolset]) -> dict[str, AbstractToolset]:
    """The toolsets less the deferred tools only a device can answer: what a front no device can reach publishes."""
    return {
        name: FilteredToolset(toolset, lambda tool: not device_only(tool), name=toolset.name)
        for name, toolset in toolsets.items()
    }


def _notification_safe(tool: Tool) -> bool:
    return tool.toolset in NOTIFICATION_SAFE


def _notification_safe_or_offered(tool: Tool) -> bool:
    from toolsets.extensions.plugins.tool import offered_to

    return tool.toolset in NOTIFICATION_SAFE or offered_to(tool, "notification-safe")


def reserved_tool_names() -> frozenset[str]:
    """Names a plugin may not take: every built-in tool (the loaders included), and the workspace's and the
    authoring tools' even where they are not published."""
    from toolsets.extensions.authoring.tools import AUTHORING_TOOLS
    from toolsets.extensions.codemode.tools import CODE_TOOLS
    from toolsets.extensions.workspace.tools import WORKSPACE_TOOLS

    builtin = assistant_toolsets(NO_EXTENSIONS, "progressive").values()
    builtin_names = {tool.name for toolset in builtin for tool in toolset}
    return frozenset(builtin_names | WORKSPACE_TOOLS | AUTHORING_TOOLS | CODE_TOOLS)


def tool_arguments(toolsets: Iterable[AbstractToolset]) -> Mapping[str, frozenset[str]]:
    """Every tool of these toolsets, with its argument names (gates are checked against them)."""
    return {tool.name: frozenset(tool.args_model.model_fields) for toolset in toolsets for tool in toolset}
