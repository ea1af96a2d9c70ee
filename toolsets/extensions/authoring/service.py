"""`ToolAuthoring`: what the authoring tools do to the tools folder, through the deployment's plugin catalog.

Each action serialises on one lock (two writes of one folder never interleave), checks with the catalog
(`check_text`: the same checks as `truloop-mcp tools check`, in a worker inside the plugin sandbox), moves
files (files.py), remembers new tools' trials (ledger.py), rescans the catalog so the change serves at once, and
writes one `authoring` audit line through the sink the composition root passed in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from toolsets.core.envelope import ToolErr, ToolOk
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.authoring import files, rehearsal
from toolsets.extensions.authoring.ledger import TRIAL_CALLS, Ledger, LedgerEntry
from toolsets.extensions.authoring.models import (
    AuthoringResult,
    FeedbackItem,
    FileStatus,
    LoadedTool,
    LoadErrorInfo,
    ToolFeedback,
    ToolListing,
)
from toolsets.extensions.plugins.feedback_view import seen_by
from toolsets.extensions.plugins.source import MAX_SOURCE_BYTES
from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL
from toolsets.pipeline.canary.cause import cause

if TYPE_CHECKING:
    from toolsets.core.context import ToolContext
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.extensions.plugins.outcome import PluginOutcome

logger = logging.getLogger("truloop.authoring")

Emit = Callable[[dict[str, Any]], None]
TRIAL_FAILURES = frozenset({ErrorCode.HANDLER_ERROR, ErrorCode.TIMEOUT})


class ToolAuthoring:
    def __init__(self, catalog: PluginCatalog, folder: Path, emit: Emit | None = None) -> None:
        self.catalog = catalog
        self.folder = folder
        self.emit = emit
        self.ledger = Ledger(folder)
        self._lock = anyio.Lock()

    # -- writing -----------------------------------------------------------------------------------------------

    async def write(self, ctx: ToolContext[Any], name: str, source: str) -> AuthoringResult:
        self._valid(name)
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError(f"The source is not valid text ({exc.reason}).", code=ErrorCode.VALIDATION) from None
        if len(data) > MAX_SOURCE_BYTES:
            raise ToolError(f"The source is larger than {MAX_SOURCE_BYTES} bytes.", code=ErrorCode.VALIDATION)
        async with self._lock:
            if name in self.catalog.versions():
                result = await self._write_candidate(ctx, name, data)
            else:
                result = await self._write_new(ctx, name, data)
        self._audit(ctx, "create_or_update", result)
        if result.state == "refused":
            raise ToolError(
                f"The new version of {name} was not written: {result.error}. The served version is unchanged.",
                code=ErrorCode.VALIDATION,
            )
        return result

    async def _write_candidate(self, ctx: ToolContext[Any], name: str, data: bytes) -> AuthoringResult:
        tool = files.ToolFiles(self.folder, name)
        problem, version, rehearsed = await self._check(tool.candidate, data, name, ctx)
        if problem is not None and rehearsed:  # it loads, but failed a case: kept pending, never served
            await anyio.to_thread.run_sync(files.write_file, tool.candidate_pending, data)
            await self._remember(
                tool.candidate_key, LedgerEntry(state="pending", version=version or "-", error=problem)
            )
            return AuthoringResult(
                name=name,
                file=tool.candidate_pending.name,
                version=version,
                state="pending",
                error=problem,
                message=f"This version failed its rehearsal, so it was kept as {tool.candidate_pending.name} and does "
                "not serve; the served version is unchanged. get_tool_feedback shows what failed before; fix the "
                "source and write it again.",
            )
        if problem is not None:
            return AuthoringResult(name=name, file=tool.candidate.name, version=version, state="refused", error=problem)
        await anyio.to_thread.run_sync(files.keep, tool.candidate_pending)
        await self._remember(tool.candidate_key, None)
        await anyio.to_thread.run_sync(files.write_file, tool.candidate, data)
        await self.catalog.rescan(settle=False)
        candidate = self.catalog.candidate(name)
        state = await self._rollout(name)
        if candidate is None or candidate.version != version:
            error = self._load_error(tool.candidate) or "the candidate was written but is not loaded"
            return AuthoringResult(name=name, file=tool.candidate.name, version=version, state="failed", error=error)
        share = f" at {state.routed_share:g}% of calls" if state is not None else ""
        return AuthoringResult(
            name=name,
            file=tool.candidate.name,
            version=version,
            state="candidate",
            message=f"{name} already serves, so this version is a canary candidate{share}: the rollout promotes it "
            "step by step while its error rate, timeouts and p95 latency hold, and rolls it back when they do not. "
            "tool_registry_status shows where it stands.",
        )

    async def _write_new(self, ctx: ToolContext[Any], name: str, data: bytes) -> AuthoringResult:
        tool = files.ToolFiles(self.folder, name)
        await anyio.to_thread.run_sync(files.write_file, tool.pending, data)
        return await self._try_pending(ctx, name, data)

    async def _try_pending(self, ctx: ToolContext[Any], name: str, data: bytes) -> AuthoringResult:
        """Check and rehearse a pending file as if it were `NAME.py`; passing, it serves on trial."""
        tool = files.ToolFiles(self.folder, name)
        problem, version, _ = await self._check(tool.stable, data, name, ctx)
        if problem is not None:
            await self._remember(name, LedgerEntry(state="pending", version=version or "-", error=problem))
            return AuthoringResult(
                name=name,
                file=tool.pending.name,
                version=version,
                state="pending",
                error=problem,
                message="The tool is not served: fix the source and write it again.",
            )
        assert version is not None
        await self._remember(name, LedgerEntry(state="trial", version=version))
        await anyio.to_thread.run_sync(files.promote_pending, tool, version)
        await self.catalog.rescan(settle=False)
        served = self.catalog.versions().get(name)
        if served is None or served.version != version:  # it imported, but create(context) failed, say
            error = self._load_error(tool.stable) or "it was checked but did not load"
            await anyio.to_thread.run_sync(files.demote, tool, version)
            await self._remember(name, LedgerEntry(state="pending", version=version, error=error))
            await self.catalog.rescan(settle=False)
            return AuthoringResult(name=name, file=tool.pending.name, version=version, state="pending", error=error)
        return AuthoringResult(
            name=name,
            file=tool.stable.name,
            version=version,
            state="trial",
            message=f"{name} is served on trial: its first {TRIAL_CALLS} calls must succeed, or it goes back to "
            "pending (tool_registry_status says why).",
        )

    async def _check(
        self, target: Path, data: bytes, name: str, ctx: ToolContext[Any]
    ) -> tuple[str | None, str | None, bool]:
        """(the reason it would not serve, verbatim, or None; its version; whether the reason is its rehearsal)."""
        from toolsets.extensions.plugins.module import PluginImportError
        from toolsets.extensions.plugins.plugin_runner import PluginLoadError
        from toolsets.extensions.plugins.source import PluginSource, PluginSourceError
        from toolsets.extensions.plugins.spec_common import PluginSpecError

        version = PluginSource.version_of(data)
        try:
            cases = await self._cases(name, data, ctx.caller.user_id)
        except rehearsal.CasesError as exc:
            return str(exc), version, False
        try:
            checked = await self.catalog.check_text(target, data)
        except (PluginSourceError, PluginImportError, PluginSpecError, PluginLoadError, TimeoutError) as exc:
            return str(exc) or type(exc).__name__, version, False
        try:
            if checked.name != name:
                wrong = f"TOOL_SPEC['name'] is {checked.name!r}; it must be {name!r}, the name the file is written as"
                return wrong, version, False
            if cases:
                failed = await rehearsal.rehearse(checked, cases, ctx)
                if failed is not None:
                    return failed, version, True
        finally:
            await checked.retire()
        return None, version, False

    async def _cases(self, name: str, data: bytes, author: str) -> list[rehearsal.Case]:
        """What the version is rehearsed on: its TOOL_CASES (else those of the version it replaces), then the
        inputs of the tool's latest feedback that were the author's own calls."""
        cases = rehearsal.declared_cases(data.decode("utf-8", "replace"))
        if cases is None:
            stable = self.catalog.versions().get(name)
            try:
                label = f"version {stable.version}'s TOOL_CASES" if stable is not None else ""
                cases = rehearsal.declared_cases(stable.source.text, label) if stable is not None else None
            except rehearsal.CasesError:
                cases = None
        found = list(cases or [])
        if self.catalog.feedback is not None:
            try:
                inputs = await self.catalog.feedback.replay_inputs(name, author)
            except Exception as exc:
                logger.warning("feedback of %s not read for its rehearsal (%s)", name, exc)
                inputs = []
            found.extend(rehearsal.Case(arguments, None, origin, strict=False) for arguments, origin in inputs)
        return found

    # -- deleting, reloading -----------------------------------------------------------------------------------

    async def delete(self, ctx: ToolContext[Any], name: str) -> AuthoringResult:
        self._valid(name)
        tool = files.ToolFiles(self.folder, name)
        async with self._lock:
            kept = [await anyio.to_thread.run_sync(files.keep, path) for path in tool.all()]
            removed = [path.name for path, moved in zip(tool.all(), kept, strict=True) if moved is not None]
            if not removed:
                raise ToolError(
                    f"There is no file of a tool named {name} in the tools folder (list_custom_tools lists them).",
                    code=ErrorCode.NOT_FOUND,
                )
            await self._remember(name, None)
            await self._remember(tool.candidate_key, None)
            await self.catalog.rescan(settle=False)
        result = AuthoringResult(
            name=name,
            file=", ".join(removed),
            state="deleted",
            message=f"Removed {', '.join(removed)} (kept under .history/ in the tools folder).",
        )
        self._audit(ctx, "delete", result)
        return result

    async def reload(self, ctx: ToolContext[Any]) -> list[AuthoringResult]:
        """Rescan the folder now, then check every pending file again (a name freed since, a fixed import)."""
        results: list[AuthoringResult] = []
        async with self._lock:
            await self.catalog.rescan(settle=False)
            for file in await anyio.to_thread.run_sync(files.folder_files, self.folder):
                if not file.endswith(files.PENDING_SUFFIX):
                    continue
                name = file.removesuffix(files.PENDING_SUFFIX)
                data = await anyio.to_thread.run_sync(files.read, self.folder / file)
                if files.name_problem(name) is None and data is not None and name not in self.catalog.versions():
                    results.append(await self._try_pending(ctx, name, data))
        for result in results:
            self._audit(ctx, "reload", result)
        if not results:
            self._audit(ctx, "reload", AuthoringResult(name="*", file="*", state="reloaded"))
        return results

    # -- trials ------------------------------------------------------------------------------------------------

    def on_trial(self, name: str, tool_version: str) -> bool:
        entry = self.ledger.get(name)
        return entry is not None and entry.state == "trial" and entry.version == tool_version

    async def on_outcome(self, heard: PluginOutcome) -> None:
        """A plugin call's envelope (heard by `FeedbackMiddleware`): a new tool's trial calls count here."""
        name, tool_version, outcome = heard.name, heard.version, heard.outcome
        entry = self.ledger.get(name)
        if entry is None or entry.state != "trial" or entry.version != tool_version:
            return
        if isinstance(outcome, ToolOk):
            successes = entry.successes + 1
            state = "active" if successes >= TRIAL_CALLS else "trial"
            await self._remember(name, entry.model_copy(update={"successes": successes, "state": state}))
            if state == "active":
                self._audit(None, "trial_passed", AuthoringResult(name=name, version=tool_version, state="active"))
            return
        if not isinstance(outcome, ToolErr) or outcome.code not in TRIAL_FAILURES:
            return  # a refusal that says nothing about the code (cancelled, a gate)
        error = f"trial call {entry.successes + 1} of {TRIAL_CALLS} failed: {outcome.code.value}: {outcome.reason}"
        async with self._lock:
            tool = files.ToolFiles(self.folder, name)
            if await anyio.to_thread.run_sync(files.demote, tool, tool_version):
                await self._remember(name, LedgerEntry(state="pending", version=tool_version, error=error))
                await self.catalog.rescan(settle=False)
        pending = f"{name}{files.PENDING_SUFFIX}"
        failed = AuthoringResult(name=name, file=pending, version=tool_version, state="pending", error=error)
        self._audit(None, "trial_failed", failed)

    # -- reading -----------------------------------------------------------------------------------------------

    async def feedback(self, name: str, limit: int, viewer: str) -> ToolFeedback:
        """The tool's feedback as `viewer` may read it: their own calls' arguments, others' by shape only."""
        self._valid(name)
        recorder = self.catalog.feedback
        if recorder is None:
            raise ToolError("No feedback is kept by this server.", code=ErrorCode.NOT_CONFIGURED)
        entries = [seen_by(entry, viewer) for entry in await recorder.recent(name, limit)]
        return ToolFeedback(
            name=name,
            kept=MAX_FEEDBACK_PER_TOOL,
            entries=[
                FeedbackItem(
                    kind=entry.kind,
                    version=entry.version,
                    route=entry.route,
                    at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.at)),
                    arguments=entry.arguments,
                    code=entry.code,
                    message=entry.message,
                    rule=entry.rule,
                    windows=entry.windows,
                    samples=entry.samples,
                )
                for entry in entries
            ],
        )

    async def listing(self) -> ToolListing:
        names = await anyio.to_thread.run_sync(files.folder_files, self.folder)
        loaded = [
            LoadedTool(
                name=version.name,
                file=version.source.path.name,
                version=version.version,
                description=version.tool_spec.description,
                candidate=False,
            )
            for version in self.catalog.versions().values()
        ]
        for name in list(self.catalog.versions()):
            candidate = self.catalog.candidate(name)
            if candidate is not None:
                loaded.append(
                    LoadedTool(
                        name=name,
                        file=candidate.source.path.name,
                        version=candidate.version,
                        description=candidate.tool_spec.description,
                        candidate=True,
                    )
                )
        errors = [
            LoadErrorInfo(file=error.path.name, version=error.version, error=error.message)
            for error in self.catalog.errors()
        ]
        return ToolListing(tools_dir=str(self.folder), files=names, loaded=loaded, errors=errors)

    async def status(self) -> list[FileStatus]:
        names = await anyio.to_thread.run_sync(files.folder_files, self.folder)
        ledger = await anyio.to_thread.run_sync(self.ledger.read)
        rows = {row["file"]: row for row in self.catalog.describe()}
        found: list[FileStatus] = []
        for file in names:
            row = rows.get(file, {})
            found.append(await self._file_status(file, row, ledger))
        return found

    async def _file_status(self, file: str, row: dict[str, Any], ledger: dict[str, LedgerEntry]) -> FileStatus:
        error = row.get("error")
        if file.endswith(files.PENDING_SUFFIX):
            key = file.removesuffix(files.PENDING_SUFFIX)  # NAME, or NAME.canary (a version that failed rehearsal)
            name = key.removesuffix(".canary")
            entry = ledger.get(key)
            data = await anyio.to_thread.run_sync(files.read, self.folder / file)
            from toolsets.extensions.plugins.source import PluginSource

            version = PluginSource.version_of(data) if data is not None else None
            reason = entry.error if entry is not None and entry.version == version else "not checked yet"
            return FileStatus(file=file, name=name, version=version, state="pending", error=reason)
        if file.endswith(".disabled"):
            name = file.split(".", 1)[0]
            rollout = await self._rollout(name)
            return FileStatus(
                file=file,
                name=name,
                state="disabled",
                detail="rolled back hard by the canary",
                cause=cause(rollout) if rollout is not None and rollout.status == "disabled" else None,
            )
        listed: str | None = row.get("name")
        version = row.get("version")
        if version is None:
            return FileStatus(file=file, name=listed, version=row.get("failed_version"), state="failed", error=error)
        if row.get("candidate"):
            rollout = await self._rollout(listed) if listed is not None else None
            detail = why = None
            if rollout is not None and rollout.candidate == version:
                detail = f"canary {rollout.status}, {rollout.routed_share:g}% of calls"
                if rollout.decision is not None:
                    detail += f"; last decision: {rollout.decision.action}: {rollout.decision.reason}"
                why = cause(rollout)
            return FileStatus(
                file=file, name=listed, version=version, state="candidate", detail=detail, error=error, cause=why
            )
        entry = ledger.get(listed) if listed is not None else None
        if entry is not None and entry.version == version and entry.state == "trial":
            detail = f"on trial: {entry.successes} of {TRIAL_CALLS} calls succeeded"
            return FileStatus(file=file, name=listed, version=version, state="trial", detail=detail, error=error)
        detail = f"a newer version failed to load; {version} keeps serving" if error else None
        return FileStatus(file=file, name=listed, version=version, state="serving", detail=detail, error=error)

    # -- helpers -----------------------------------------------------------------------------------------------

    def _valid(self, name: str) -> None:
        problem = files.name_problem(name)
        if problem is not None:
            raise ToolError(problem, code=ErrorCode.VALIDATION)

    def _load_error(self, path: Path) -> str | None:
        for error in self.catalog.errors():
            if error.path.name == path.name:
                return error.message
        return None

    async def _rollout(self, name: str) -> Any:
        try:
            return await self.catalog.canary.store.load(name)
        except Exception:
            return None

    async def _remember(self, name: str, entry: LedgerEntry | None) -> None:
        await anyio.to_thread.run_sync(self.ledger.put, name, entry)

    def _audit(self, ctx: ToolContext[Any] | None, action: str, result: AuthoringResult) -> None:
        if self.emit is None:
            return
        line: dict[str, Any] = {
            "ts": time.time(),
            "event": "authoring",
            "action": action,
            "user_id": ctx.caller.user_id if ctx is not None else "-",
            "tool_name": result.name,
            "file": result.file,
            "tool_version": result.version,
            "status": "error" if result.error else "ok",
            "state": result.state,
        }
        if ctx is not None and ctx.request.request_id is not None:
            line["request_id"] = ctx.request.request_id
        if result.error:
            line["error"] = result.error
        try:
            self.emit(line)
        except Exception:
            logger.exception("could not audit an authoring action")
