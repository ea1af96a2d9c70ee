"""The plugins of a tools folder: scanned, loaded, published, reloaded when their files change.

A file serves one tool (`TOOL_SPEC`), one resource or resource template (`RESOURCE_SPEC`) or one prompt
(`PROMPT_SPEC`); the three kinds are loaded, checked, isolated and reloaded the same way. Each kind has names of
its own (a tool's name, a resource's URI or template, a prompt's name), which two files may not share.

Hot reload: every `POLL_SECONDS` the folder is listed and each file's stat signature
compared with the last one seen; only a changed file is read, and only a changed content hash is
loaded (import, spec check, name check, `create`) while the previous version keeps serving. A version
that loaded is published in one swap (a call finds the old version or the new, never half of one); the
replaced version is retired (closed once its last call ends). A version that fails is not published,
the error is kept for `truloop-mcp tools list` and logged, and the previous good version keeps serving.

Each version loads in a task of its own, never under the catalog's lock (which covers only the quick
bookkeeping: what is served, what is retired), so a plugin whose import never ends holds up nothing else;
a newer version of the same file cancels the load of the older one at once. Its first import runs in a
child process, killed when it overruns `IMPORT_SECONDS` or is cancelled: in-process isolation imports it in
the server only after that child imported it (import_check.py), process isolation in its worker (killed
the same way). The versions that one scan starts settle their names in the scan's order, so which of two
files declaring one name serves does not depend on which imports faster.

Files: `DIR/*.py`, except names starting with `_` (helpers, `__init__.py`). `NAME.canary.py` is loaded the same
way as the candidate version of the tool it declares: it is not published itself (the stable file's version is),
it waits until a stable file serves that name, and the canary router (toolsets/pipeline/canary) routes a share of that
tool's calls to it; its rollout starts as soon as it is loaded (so `truloop-mcp canary status` shows it before its
first call).

Stopping: every version is retired at once, within `UNLOAD_SECONDS` in all (a plugin whose `close()` hangs does
not hold the process); the plugin threads are daemon threads (threads.py), so none holds the process's exit.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from toolsets.extensions.plugins.changes import PluginChange, ToolListChanges
from toolsets.extensions.plugins.context import DEFAULT_MAX_READ_BYTES
from toolsets.extensions.plugins.import_check import check_import
from toolsets.extensions.plugins.module import PluginImportError, import_plugin, module_name
from toolsets.extensions.plugins.plugin_runner import PluginLoadError, PluginRunner
from toolsets.extensions.plugins.source import PluginSource, PluginSourceError
from toolsets.extensions.plugins.spec_common import PluginSpecError
from toolsets.extensions.plugins.spec_kinds import parse_spec
from toolsets.extensions.plugins.threads import PluginThreads
from toolsets.extensions.plugins.version import PluginVersion
from toolsets.extensions.plugins.view_slots import ViewSlots
from toolsets.infra.private_files import private_dir

if TYPE_CHECKING:
    from toolsets.extensions.plugins.feedback import FeedbackRecorder
    from toolsets.extensions.plugins.spec_kinds import AnySpec
    from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox
    from toolsets.pipeline.canary.router import CanaryRouter, CanarySetup

logger = logging.getLogger("truloop.plugins")

Isolation = Literal["inprocess", "process", "sandbox"]
POLL_SECONDS = 0.2
SETTLE_SECONDS = 0.05  # a file written this recently may still be being written: look again next poll
IMPORT_SECONDS = 30.0
IMPORTS_AT_ONCE = 4  # versions being imported (each in a child or worker process) at one time
UNLOAD_SECONDS = 5.0  # stopping: every version's close() together, at most this long
Signature = tuple[int, int, int]  # mtime_ns, size, inode
CANDIDATE_SUFFIX = ".canary.py"


class NameRefused(Exception):  # noqa: N818 - a refusal, reported like a load error
    pass


class AwaitsStable(Exception):  # noqa: N818 - a candidate loaded before (or without) its stable file
    pass


@dataclass(frozen=True, slots=True)
class PluginConfig:
    tools_dir: Path
    data_dir: Path  # each plugin's own folder is data_dir / <tool name>
    isolation: Isolation = "inprocess"
    poll_seconds: float = POLL_SECONDS
    max_resource_bytes: int = DEFAULT_MAX_READ_BYTES  # a plugin resource's contents (`--max-resource-bytes`)


@dataclass(frozen=True, slots=True)
class LoadError:
    path: Path
    version: str | None  # the content hash that failed (None: the file could not be read)
    message: str
    at: float


@dataclass(eq=False)
class _FileState:
    signature: Signature | None = None  # the stat signature last dealt with
    digest: str | None = None  # the content last tried (loaded or not)
    version: PluginVersion | None = None  # what this file serves (an older version when the newest failed)
    error: LoadError | None = None
    refused_name: str | None = None  # refused because another file serves this name: tried again when it goes
    awaits_stable: str | None = None  # a candidate whose tool no stable file serves yet: tried again when one does
    tried: PluginSource | None = None  # the content last tried (what a retry loads again)
    loading: _Load | None = None  # the version on its way in (a newer one cancels it)


@dataclass(eq=False)
class _Load:
    """One version of one file on its way in, in a task of its own."""

    path: Path
    state: _FileState
    source: PluginSource
    after: _Load | None  # the load before this one in its scan: its name is settled first
    retry: bool  # loaded again because the name it was refused became free (or its stable file now serves)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)

    async def ready(self) -> None:
        """Wait until the loads before this one in its scan have published or failed."""
        if self.after is not None:
            await self.after.done.wait()
            self.after = None


def is_candidate(path: Path) -> bool:
    return path.name.endswith(CANDIDATE_SUFFIX)


def plugin_files(tools_dir: Path) -> dict[Path, Signature]:
    """The folder's plugin files and their stat signatures, stable files first, each kind in name order
    (blocking: run it on a thread)."""
    found: dict[Path, Signature] = {}
    try:
        paths = sorted(tools_dir.glob("*.py"), key=lambda path: (is_candidate(path), path.name))
    except OSError:
        return found
    for path in paths:
        if path.name.startswith("_"):
            continue
        try:
            stat = path.stat()
        except OSError:
            continue  # gone since the listing
        if S_ISREG(stat.st_mode):
            found[path] = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    return found


class PluginCatalog:
    def __init__(
        self,
        reserved: Callable[[], Collection[str]],
        changes: ToolListChanges | None = None,
        reserved_prompts: Collection[str] = (),
        feedback: FeedbackRecorder | None = None,
        *,
        config: PluginConfig | None = None,
        sandbox: PluginWorkerSandbox | None = None,
        canary: CanarySetup | None = None,
    ) -> None:
        """`reserved`: the names a plugin tool may not take (the deployment's built-in tools), asked at each load;
        `reserved_prompts`: the built-in prompts' names; `feedback`: where failed calls and canary causes are kept
        (the calls are heard by `FeedbackMiddleware`, the canary's holds and rollbacks by its router); `config`: the
        deployment's folder (None: no plugins); `sandbox`: for `sandbox` isolation, the sandbox (also used to check a
        file without a folder); `canary`: the canary router's store, key and audit (`canary`)."""
        if config is not None and config.isolation == "sandbox" and sandbox is None:
            raise ValueError("sandbox isolation needs the sandbox")
        self.config = config
        self.sandbox = sandbox  # given: every file is imported and run only inside it
        self._canary_setup = canary
        self.reserved = reserved
        self.reserved_prompts = frozenset(reserved_prompts)
        self.changes = changes if changes is not None else ToolListChanges()
        self.revision = 0
        self._files: dict[Path, _FileState] = {}
        self._published: dict[str, PluginVersion] = {}  # tools
        self._served: dict[str, PluginVersion] = {}  # every kind, by key
        self._resources: tuple[PluginVersion, ...] = ()  # resources and templates, in file order
        self._prompts: dict[str, PluginVersion] = {}  # by prompt name
        self._change: set[str] = set()  # kinds changed since the last announcement
        self._updated: set[str] = set()  # fixed resource URIs whose version changed since then
        self._candidates: dict[str, PluginVersion] = {}
        self._leaving: list[PluginVersion] = []  # deleted files' versions, still published until the next swap
        self._lock = anyio.Lock()  # held for bookkeeping only, never across an import or a create()
        self._importing = anyio.CapacityLimiter(IMPORTS_AT_ONCE)
        self._tg: TaskGroup | None = None
        self._create = True
        self.threads = PluginThreads()  # where in-process plugins' sync code runs
        # resource reads and prompt gets in flight, per plugin (with its calls abandoned but still running) and per user
        self.view_slots = ViewSlots(still_running=self.threads.abandoned_by)
        self.feedback = feedback

    def versions(self) -> Mapping[str, PluginVersion]:
        """The published tool versions, by tool name."""
        return self._published

    def resources(self) -> tuple[PluginVersion, ...]:
        """The published resources and resource templates (their specs are `ResourceSpec`s)."""
        return self._resources

    def prompts(self) -> Mapping[str, PluginVersion]:
        """The published prompts, by prompt name (their specs are `PromptSpec`s)."""
        return self._prompts

    def candidate(self, name: str) -> PluginVersion | None:
        """The loaded candidate version (`NAME.canary.py`) of a published tool, if there is one."""
        return self._candidates.get(name) if self._candidates else None

    @cached_property
    def canary(self) -> CanaryRouter:
        """Routes the calls of tools with a candidate (with the deployment's store and key, given at construction)."""
        from toolsets.pipeline.canary.router import CanaryRouter

        return CanaryRouter(self, self._canary_setup)

    def errors(self) -> list[LoadError]:
        return [state.error for state in self._files.values() if state.error is not None]

    def serving(self, path: Path) -> PluginVersion | None:
        state = self._files.get(path)
        return state.version if state is not None else None

    @asynccontextmanager
    async def running(self, *, watch: bool = True, create: bool = True) -> AsyncIterator[PluginCatalog]:
        """Load the folder, keep it loaded (and, with `watch`, reloaded) while inside; close every version after.

        `create=False` imports and checks each plugin without calling its `create` (`truloop-mcp tools list`).
        """
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._create = create
            try:
                if self.config is not None:
                    await self.rescan(settle=False)  # at start, whatever is there is what to serve
                    if watch:
                        tg.start_soon(self._watch)
                yield self
            finally:
                for state in self._files.values():
                    if state.loading is not None:
                        state.loading.scope.cancel()  # a hung import's child process is killed now
                with anyio.CancelScope(shield=True):
                    await self._unload()
                self._tg = None
                tg.cancel_scope.cancel()

    async def rescan(self, *, settle: bool = True) -> bool:
        """Bring the catalog in line with the folder, waiting for the versions it loads; True when the published
        tools changed meanwhile. With `settle`, a file modified in the last `SETTLE_SECONDS` waits for the next
        scan (it may be half written). A hung import elsewhere in the folder is waited for up to its limit (the
        watcher never waits: it only starts loads)."""
        revision = self.revision
        await self._scan(settle=settle)
        await self._settled()
        return self.revision != revision

    async def _scan(self, *, settle: bool = True) -> None:
        """List the folder and start a load for each changed file (cancelling the load of its older version)."""
        retired: list[PluginVersion] = []
        starting: list[_Load] = []
        async with self._lock:
            if self.config is None:
                return
            present = await anyio.to_thread.run_sync(plugin_files, self.config.tools_dir)
            self._forget_deleted(set(present))
            for path, signature in present.items():
                source = await self._changed(path, signature, settle=settle)
                if source is not None:
                    starting.append(self._begin(path, self._files[path], source, starting))
            if self._leaving:
                starting.extend(self._retry_refused(starting))
            changed = self._publish_if_due(retired)
        await self._launch(starting)
        await self._retired(retired, changed)

    async def _settled(self) -> None:
        """Wait until no load is under way (a load's retries count too)."""
        while pending := [state.loading for state in self._files.values() if state.loading is not None]:
            for load in pending:
                await load.done.wait()

    async def _retired(self, retired: list[PluginVersion], changed: bool) -> None:
        for version in retired:
            await version.retire()
        if changed:
            if self._candidates and self._create:
                await self.canary.observe()  # a candidate's rollout starts when it is loaded, not at its first call
            kinds, updated = frozenset(self._change or {"tool"}), tuple(sorted(self._updated))
            self._change, self._updated = set(), set()
            await self.changes.announce(PluginChange(kinds, updated))

    # -- scanning ---------------------------------------------------------------------------------------------

    def _forget_deleted(self, present: set[Path]) -> None:
        """Deleted files' versions leave at the next swap: after the files their names freed were loaded again, so
        a name passed from one file to another is never missing in between."""
        for path in [path for path in self._files if path not in present]:
            state = self._files.pop(path)
            if state.loading is not None:
                state.loading.scope.cancel()
            if state.version is not None:
                logger.info("plugin %s: %s was deleted; no longer served", state.version.name, path.name)
                self._leaving.append(state.version)

    async def _changed(self, path: Path, signature: Signature, *, settle: bool) -> PluginSource | None:
        """The file's content when it is new (not yet tried), else None."""
        state = self._files.setdefault(path, _FileState())
        if signature == state.signature:
            return None
        if settle and 0 <= time.time_ns() - signature[0] < SETTLE_SECONDS * 1e9:
            return None  # being written right now, perhaps: the next poll sees it settled
        state.signature = signature
        try:
            source = await anyio.to_thread.run_sync(PluginSource.read, path)
        except PluginSourceError as exc:
            self._failed(state, path, None, str(exc))
            return None
        if source.digest == state.digest:
            return None
        state.digest = source.digest
        return source

    def _begin(self, path: Path, state: _FileState, source: PluginSource, batch: list[_Load]) -> _Load:
        """A load of `source` for `path` (under the lock), superseding the one under way; `batch`: the loads
        started before it in the same scan."""
        if state.loading is not None:
            logger.info("plugin file %s: a newer version supersedes the one being loaded", path.name)
            state.loading.scope.cancel()
        load = _Load(path, state, source, after=batch[-1] if batch else None, retry=source is state.tried)
        state.loading, state.tried, state.refused_name, state.awaits_stable = load, source, None, None
        return load

    def _spawn(self, loads: list[_Load]) -> bool:
        """Start each load in a task of its own; False when not running (a catalog used without `running()`)."""
        if self._tg is None:
            return False
        for load in loads:
            self._tg.start_soon(self._run_load, load)
        return True

    async def _launch(self, loads: list[_Load]) -> None:
        if not self._spawn(loads):
            for load in loads:  # one after another, here
                await self._run_load(load)

    async def _run_load(self, load: _Load) -> None:
        """Load one version, then (under the lock, if it is still the one wanted) publish it or keep its error."""
        version: PluginVersion | None = None
        retired: list[PluginVersion] = []
        starting: list[_Load] = []
        published = False
        try:
            with load.scope:
                version, failure = await self._attempt(load)
                async with self._lock:
                    published, starting = self._settle(load, version, failure, retired)
                version = None  # published, or in `retired`
        finally:
            if version is not None:
                retired.append(version)  # loaded, but cut short before it was published
            spawned = self._spawn(starting)
            with anyio.CancelScope(shield=True):
                for old in retired:
                    await old.retire()
            try:
                if published:
                    await self._retired([], True)  # told before `rescan` returns (a candidate's rollout has started)
            finally:
                load.done.set()
        if not spawned:
            await self._launch(starting)

    def _settle(
        self,
        load: _Load,
        version: PluginVersion | None,
        failure: tuple[str, str | None, str | None] | None,
        retired: list[PluginVersion],
    ) -> tuple[bool, list[_Load]]:
        """(Under the lock.) Publish the loaded version or keep the failure, if the load is still the one wanted;
        (whether the published tools changed, the loads that change lets start)."""
        path, state = load.path, load.state
        if self._files.get(path) is not state or state.loading is not load:
            if version is not None:
                retired.append(version)  # superseded or deleted meanwhile
            return self._publish_if_due(retired), []
        state.loading = None
        if version is not None:
            failure = self._still_accepted(version, path, state)
            if failure is not None:
                retired.append(version)
                version = None
        if version is None:
            assert failure is not None
            message, state.refused_name, state.awaits_stable = failure
            self._failed(state, path, load.source.version, message)
            return self._publish_if_due(retired), []
        if state.version is not None:
            retired.append(state.version)
        logger.info("plugin %s: version %s from %s is served", version.name, version.version, path.name)
        state.version, state.error, state.refused_name, state.awaits_stable = version, None, None, None
        retired.extend(self._publish())
        return True, self._retry_refused([])

    async def _attempt(self, load: _Load) -> tuple[PluginVersion | None, tuple[str, str | None, str | None] | None]:
        """(the loaded version, None) or (None, (the reason, verbatim; the name refused; the stable awaited))."""
        path = load.path
        try:
            return await self._load(load.source, load.state, ready=load.ready), None
        except NameRefused as exc:
            return None, (str(exc.args[0]), str(exc.args[1]), None)
        except AwaitsStable as exc:
            return None, (str(exc.args[0]), None, str(exc.args[1]))
        except (PluginSourceError, PluginImportError, PluginSpecError, PluginLoadError, TimeoutError) as exc:
            return None, (str(exc) or type(exc).__name__, None, None)
        except Exception as exc:  # a bug of ours must not stop the watcher
            logger.exception("plugin file %s: unexpected error while loading", path.name)
            return None, (f"{type(exc).__name__}: {exc}", None, None)

    def _still_accepted(
        self, version: PluginVersion, path: Path, state: _FileState
    ) -> tuple[str, str | None, str | None] | None:
        """The name checked again at publishing: a file loaded meanwhile (in another scan) may have taken it."""
        try:
            self._accepted(version.spec, path, state)
        except NameRefused as exc:
            return str(exc.args[0]), str(exc.args[1]), None
        except AwaitsStable as exc:
            return str(exc.args[0]), None, str(exc.args[1])
        except PluginSpecError as exc:
            return str(exc), None, None
        return None

    def _retry_refused(self, batch: list[_Load]) -> list[_Load]:
        """(Under the lock.) A file refused for a name another file served may take the name once that file let
        it go; a candidate that waited for its stable file is loaded once one serves."""
        served = {s.version.name for p, s in self._files.items() if s.version is not None and not is_candidate(p)}
        starting: list[_Load] = []
        for path, state in sorted(self._files.items(), key=lambda item: (is_candidate(item[0]), item[0].name)):
            if state.loading is not None or state.tried is None:
                continue
            if (state.refused_name is not None and state.refused_name not in served) or (
                state.awaits_stable is not None and state.awaits_stable in served
            ):
                starting.append(self._begin(path, state, state.tried, [*batch, *starting]))
        return starting

    def _failed(self, state: _FileState, path: Path, version: str | None, message: str) -> None:
        state.error = LoadError(path, version, message, time.time())
        keeps = f"; version {state.version.version} keeps serving" if state.version is not None else ""
        logger.warning("plugin file %s (version %s) not loaded: %s%s", path.name, version or "-", message, keeps)

    def _publish(self) -> list[PluginVersion]:
        """(Under the lock.) Serve what the files hold now, in one swap; the deleted files' versions, to retire."""
        loaded = [(path, state.version) for path, state in self._files.items() if state.version is not None]
        served = {version.name: version for path, version in loaded if not is_candidate(path)}
        self._note_changes(self._served, served)
        self._served = served
        self._published = {key: version for key, version in served.items() if version.spec.kind == "tool"}
        self._resources = tuple(version for version in served.values() if version.spec.kind == "resource")
        self._prompts = {v.spec.name: v for v in served.values() if v.spec.kind == "prompt"}
        self._candidates = {v.name: v for path, v in loaded if is_candidate(path) and v.name in self._published}
        self.revision += 1
        leaving, self._leaving = self._leaving, []
        return leaving

    def _note_changes(self, before: Mapping[str, PluginVersion], after: Mapping[str, PluginVersion]) -> None:
        """(Under the lock.) What the next announcement says: the kinds whose lists changed and the fixed resources
        served by a new version (their content may have changed)."""
        for key in before.keys() | after.keys():
            old, new = before.get(key), after.get(key)
            if old is new:
                continue
            self._change.add((new or old).spec.kind)  # type: ignore[union-attr]  # one of them is there
            uri = getattr(new.spec, "uri", None) if new is not None and old is not None else None
            if uri:
                self._updated.add(uri)

    def _publish_if_due(self, retired: list[PluginVersion]) -> bool:
        """(Under the lock.) Publish a deletion once no file it let take a name is still loading."""
        if not self._leaving or any(s.loading is not None and s.loading.retry for s in self._files.values()):
            return False
        retired.extend(self._publish())
        return True

    # -- loading one version ----------------------------------------------------------------------------------

    async def _load(
        self,
        source: PluginSource,
        state: _FileState,
        *,
        create: bool | None = None,
        ready: Callable[[], Awaitable[None]] | None = None,
    ) -> PluginVersion:
        """Load one version; `create` (default: the catalog's mode) starts it, else it is only checked. `ready`
        is awaited once it imported, before its name is checked (the loads before it settle theirs first)."""
        create = self._create if create is None else create
        name = module_name(source.path, source.version)
        in_process_mode = self.config is not None and self.config.isolation == "process"
        if self.sandbox is not None or (in_process_mode and (create or self._tg is not None)):
            return await self._load_in_worker(source, name, state, create=create, ready=ready)
        async with self._importing:
            checked = await check_import(source, name, IMPORT_SECONDS)  # in a child, killed if it hangs
        if ready is not None:
            await ready()
        if checked is not None:  # a bad spec or a taken name is refused without importing it here
            self._accepted(parse_spec(checked), source.path, state)
        from toolsets.extensions.plugins.inprocess import InProcessRunner
        from toolsets.extensions.plugins.module import forget

        try:
            with anyio.fail_after(IMPORT_SECONDS):
                loaded = await self.threads.run(partial(import_plugin, source.text, source.path, name))
        except TimeoutError:
            raise PluginImportError(f"importing it did not finish within {IMPORT_SECONDS:g} s") from None
        try:
            spec = self._accepted(parse_spec(loaded.raw_spec), source.path, state)
        except Exception:
            forget(name)
            raise
        runner = InProcessRunner(
            loaded,
            tool_name=spec.name,
            version=source.version,
            data_dir=self._data_dir(spec, create),
            threads=self.threads,
            owner=spec.key,
        )
        return await self._started(spec, source, runner, create)

    async def _load_in_worker(
        self,
        source: PluginSource,
        name: str,
        state: _FileState,
        *,
        create: bool,
        ready: Callable[[], Awaitable[None]] | None,
    ) -> PluginVersion:
        """In a worker process (in the sandbox, when there is one): the plugin's code (its import too) never runs
        in this one. Outside `running()` (`tools check FILE`) the worker lives in a task group of its own and is
        gone once the file is checked."""
        if self._tg is not None:
            return await self._in_worker(source, name, state, self._tg.start_soon, create=create, ready=ready)
        async with anyio.create_task_group() as tg:
            version = await self._in_worker(source, name, state, tg.start_soon, create=False, ready=ready)
            with anyio.CancelScope(shield=True):
                await version.runner.stop()  # its reader task ends with it, so the task group can close
        return version

    async def _in_worker(
        self,
        source: PluginSource,
        name: str,
        state: _FileState,
        spawn: Callable[..., Any],
        *,
        create: bool,
        ready: Callable[[], Awaitable[None]] | None,
    ) -> PluginVersion:
        from toolsets.extensions.plugins.process import ProcessRunner

        runner = ProcessRunner(source, name, spawn, self.sandbox)
        try:
            async with self._importing:
                raw = await runner.load()
            if ready is not None:
                await ready()
            spec = self._accepted(parse_spec(raw), source.path, state)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await runner.abort()  # a worker still busy importing would never answer `close`
            raise
        runner.identify(spec.name, self._data_dir(spec, create), retry_safe=spec.retry_safe)
        return await self._started(spec, source, runner, create)

    async def _started(self, spec: AnySpec, source: PluginSource, runner: PluginRunner, create: bool) -> PluginVersion:
        version = PluginVersion(spec, source, runner)
        try:
            version.input_validator  # noqa: B018 - compiled now, so a schema problem is a load error
            if create:
                await version.start()
        except TimeoutError:
            await runner.stop()
            raise PluginLoadError("create(context) did not return in time") from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await runner.stop()
            raise
        return version

    def _accepted(self, spec: AnySpec, path: Path, state: _FileState) -> AnySpec:
        if spec.kind == "tool" and spec.name in self.reserved():
            raise PluginSpecError(f"the name {spec.name!r} is a built-in tool's; choose another name")
        if spec.kind == "prompt" and spec.name in self.reserved_prompts:
            raise PluginSpecError(f"the prompt name {spec.name!r} is a built-in prompt's; choose another name")
        candidate = is_candidate(path)
        if candidate and spec.kind != "tool":
            raise PluginSpecError(f"{path.name}: canary versions are for tools; a {spec.kind} is replaced in place")
        key, shown = spec.key, _shown(spec)
        stable_served = False
        for other_path, other in self._files.items():
            if other is state or other.version is None or other.version.name != key:
                continue
            if is_candidate(other_path) == candidate:
                served = "is already a candidate in" if candidate else "is already served by"
                raise NameRefused(f"{shown} {served} {other_path.name}", key)
            stable_served = True  # (the other kind: for a candidate, its stable file)
        if candidate and not stable_served:
            message = f"a candidate version of {spec.name!r}, but no stable file serves that tool yet"
            raise AwaitsStable(message, key)
        return spec

    def _data_dir(self, spec: AnySpec, create: bool) -> Path:
        if self.sandbox is not None:  # the host's folders are not there: a scratch folder in the sandbox
            return self.sandbox.data_dir
        folder_name = spec.name if spec.kind == "tool" else f"{spec.kind}-{_folder_safe(spec.key)}"
        if self.config is None:  # a file checked without a tools folder: nothing runs, nothing is written
            return Path(folder_name)
        folder = self.config.data_dir / folder_name
        if create:
            private_dir(folder)
        return folder

    async def check(self, path: Path) -> PluginVersion:
        """Load `path` as a plugin without calling `create` or publishing it (`truloop-mcp tools check`): its
        import, its spec and its name (against the built-in tools and this catalog's plugins). Raises with the
        reason; the caller retires the version it gets."""
        source = await anyio.to_thread.run_sync(PluginSource.read, path)
        real = Path(await anyio.to_thread.run_sync(os.path.realpath, path))
        return await self._checked(source, self._files.get(real) or self._files.get(path) or _FileState())

    async def check_text(self, target: Path, data: bytes) -> PluginVersion:
        """Check `data` as if it were the file `target` in the folder (its name checked against the other files,
        not against `target`'s current version): what a file written there would do. Under process isolation the
        code runs in a worker process. Raises with the reason; the caller retires the version it gets."""
        source = PluginSource.from_bytes(target, data)
        return await self._checked(source, self._files.get(target) or _FileState())

    async def _checked(self, source: PluginSource, state: _FileState) -> PluginVersion:
        try:
            return await self._load(source, state, create=False)
        except (NameRefused, AwaitsStable) as exc:
            raise PluginSpecError(str(exc.args[0])) from None

    # -- watching and stopping --------------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Scan every `poll_seconds`, never waiting for the loads a scan starts (a hung one holds up nothing)."""
        assert self.config is not None
        while True:
            await anyio.sleep(self.config.poll_seconds)
            try:
                await self._scan()
            except Exception:
                logger.exception("plugin rescan failed; trying again at the next poll")

    async def _unload(self) -> None:
        async with self._lock:
            versions = [state.version for state in self._files.values() if state.version is not None]
            versions.extend(self._leaving)
            self._files.clear()
            self._leaving = []
            if self._published or self._candidates:
                self._published, self._candidates = {}, {}
                self.revision += 1
            async with anyio.create_task_group() as tg:
                for version in versions:
                    tg.start_soon(version.retire, UNLOAD_SECONDS)

    def describe(self) -> list[dict[str, Any]]:
        """What `truloop-mcp tools list` shows: one entry per file."""
        rows: list[dict[str, Any]] = []
        for path, state in sorted(self._files.items()):
            row: dict[str, Any] = {"file": path.name}
            if is_candidate(path):
                row["candidate"] = True
                row["route"] = "canary"
            if state.version is not None:
                spec = state.version.spec
                row.update(
                    kind=spec.kind,
                    name=spec.name,
                    version=state.version.version,
                    sha256=state.version.source.digest,
                    label=spec.version,
                    profiles=list(spec.profiles),
                    timeout_s=spec.timeout_s,
                )
                uri = getattr(spec, "uri", None) or getattr(spec, "uri_template", None)
                if uri:
                    row["uri"] = uri
            if state.error is not None:
                row.update(error=state.error.message, failed_version=state.error.version)
            rows.append(row)
        return rows


def _shown(spec: AnySpec) -> str:
    """How a refusal names what the file serves."""
    if spec.kind == "resource":
        return f"the resource {spec.key!r}"
    if spec.kind == "prompt":
        return f"the prompt name {spec.name!r}"
    return f"the name {spec.name!r}"


def _folder_safe(key: str) -> str:
    import hashlib
    import re

    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:60].strip("._") or "plugin"
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
