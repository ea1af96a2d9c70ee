"""The plugins of a tools folder: scanned, loaded, published, reloaded when their files change.

Hot reload: every `POLL_SECONDS` the folder is listed and each file's stat signature
compared with the last one seen; only a changed file is read, and only a changed content hash is
loaded (import, spec check, name check, `create`) while the previous version keeps serving. A version
that loaded is published in one swap (a call finds the old version or the new, never half of one); the
replaced version is retired (closed once its last call ends). A version that fails is not published,
the error is kept for `truloop-mcp tools list` and logged, and the previous good version keeps serving.

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
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from toolsets.extensions.plugins.changes import ToolListChanges
from toolsets.extensions.plugins.module import PluginImportError, import_plugin, module_name
from toolsets.extensions.plugins.plugin_runner import PluginLoadError, PluginRunner
from toolsets.extensions.plugins.source import PluginSource, PluginSourceError
from toolsets.extensions.plugins.spec import PluginSpec, PluginSpecError, parse_spec
from toolsets.extensions.plugins.threads import PluginThreads
from toolsets.extensions.plugins.version import PluginVersion
from toolsets.infra.private_files import private_dir

if TYPE_CHECKING:
    from toolsets.core.envelope import ToolResult
    from toolsets.pipeline.canary.router import CanaryRouter

OutcomeListener = Callable[[str, str, "ToolResult"], Awaitable[None]]  # (tool name, version that ran, envelope)

logger = logging.getLogger("truloop.plugins")

Isolation = Literal["inprocess", "process"]
POLL_SECONDS = 0.2
SETTLE_SECONDS = 0.05  # a file written this recently may still be being written: look again next poll
IMPORT_SECONDS = 30.0
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
    def __init__(self, reserved: Callable[[], Collection[str]], changes: ToolListChanges | None = None) -> None:
        """`reserved`: the names a plugin may not take (the deployment's built-in tools), asked at each load."""
        self.config: PluginConfig | None = None
        self.reserved = reserved
        self.changes = changes if changes is not None else ToolListChanges()
        self.revision = 0
        self._files: dict[Path, _FileState] = {}
        self._published: dict[str, PluginVersion] = {}
        self._candidates: dict[str, PluginVersion] = {}
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None
        self._create = True
        self.threads = PluginThreads()  # where in-process plugins' sync code runs
        self.outcome_listeners: list[OutcomeListener] = []  # told each plugin call's envelope (authoring trials)

    def configure(self, config: PluginConfig | None) -> None:
        """The deployment's folder (None: no plugins). Takes effect at the next `running()`."""
        self.config = config

    def versions(self) -> Mapping[str, PluginVersion]:
        """The published versions, by tool name."""
        return self._published

    def candidate(self, name: str) -> PluginVersion | None:
        """The loaded candidate version (`NAME.canary.py`) of a published tool, if there is one."""
        return self._candidates.get(name) if self._candidates else None

    @cached_property
    def canary(self) -> CanaryRouter:
        """Routes the calls of tools with a candidate (configured by the deployment: its store and key)."""
        from toolsets.pipeline.canary.router import CanaryRouter

        return CanaryRouter(self)

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
                with anyio.CancelScope(shield=True):
                    await self._unload()
                self._tg = None
                tg.cancel_scope.cancel()

    async def rescan(self, *, settle: bool = True) -> bool:
        """Bring the catalog in line with the folder; True when the published tools changed. With `settle`, a
        file modified in the last `SETTLE_SECONDS` waits for the next scan (it may be half written)."""
        async with self._lock:
            if self.config is None:
                return False
            retired: list[PluginVersion] = []
            present = await anyio.to_thread.run_sync(plugin_files, self.config.tools_dir)
            changed = self._forget_deleted(set(present), retired)
            for path, signature in present.items():
                changed |= await self._refresh(path, signature, retired, settle=settle)
            while changed and await self._retry_refused(retired):
                pass
            if changed:
                self._publish()
            for version in retired:
                await version.retire()
        if changed:
            if self._candidates and self._create:
                await self.canary.observe()  # a candidate's rollout starts when it is loaded, not at its first call
            await self.changes.announce()
        return changed

    async def heard(self, name: str, tool_version: str, outcome: ToolResult) -> None:
        """A plugin call's envelope, for those who follow calls (the authoring trials); never fails the call."""
        for listener in list(self.outcome_listeners):
            try:
                await listener(name, tool_version, outcome)
            except Exception:
                logger.exception("a plugin outcome listener failed")

    # -- scanning ---------------------------------------------------------------------------------------------

    def _forget_deleted(self, present: set[Path], retired: list[PluginVersion]) -> bool:
        changed = False
        for path in [path for path in self._files if path not in present]:
            state = self._files.pop(path)
            if state.version is not None:
                logger.warning("plugin %s: %s was deleted; no longer served", state.version.name, path.name)
                retired.append(state.version)
                changed = True
        return changed

    async def _refresh(
        self,
        path: Path,
        signature: Signature | None,
        retired: list[PluginVersion],
        *,
        again: bool = False,
        settle: bool = True,
    ) -> bool:
        state = self._files.setdefault(path, _FileState())
        if signature == state.signature and not again:
            return False
        if settle and not again and signature is not None and 0 <= time.time_ns() - signature[0] < SETTLE_SECONDS * 1e9:
            return False  # being written right now, perhaps: the next poll sees it settled
        state.signature = signature
        try:
            source = await anyio.to_thread.run_sync(PluginSource.read, path)
        except PluginSourceError as exc:
            self._failed(state, path, None, str(exc))
            return False
        if source.digest == state.digest and not again:
            return False
        state.digest = source.digest
        try:
            version = await self._load(source, state)
        except NameRefused as exc:
            state.refused_name = str(exc.args[1])
            self._failed(state, path, source.version, str(exc.args[0]))
            return False
        except AwaitsStable as exc:
            state.awaits_stable = str(exc.args[1])
            self._failed(state, path, source.version, str(exc.args[0]))
            return False
        except (PluginSourceError, PluginImportError, PluginSpecError, PluginLoadError, TimeoutError) as exc:
            self._failed(state, path, source.version, str(exc) or type(exc).__name__)
            return False
        except Exception as exc:  # a bug of ours must not stop the watcher
            logger.exception("plugin file %s: unexpected error while loading", path.name)
            self._failed(state, path, source.version, f"{type(exc).__name__}: {exc}")
            return False
        if state.version is not None:
            retired.append(state.version)
        logger.info("plugin %s: version %s from %s is served", version.name, version.version, path.name)
        state.version, state.error, state.refused_name, state.awaits_stable = version, None, None, None
        return True

    async def _retry_refused(self, retired: list[PluginVersion]) -> bool:
        """A file refused for a name another file served may take the name once that file let it go."""
        served = {s.version.name for p, s in self._files.items() if s.version is not None and not is_candidate(p)}
        changed = False
        for path, state in sorted(self._files.items()):
            if (state.refused_name is not None and state.refused_name not in served) or (
                state.awaits_stable is not None and state.awaits_stable in served
            ):
                changed |= await self._refresh(path, state.signature, retired, again=True)
        return changed

    def _failed(self, state: _FileState, path: Path, version: str | None, message: str) -> None:
        state.error = LoadError(path, version, message, time.time())
        keeps = f"; version {state.version.version} keeps serving" if state.version is not None else ""
        logger.warning("plugin file %s (version %s) not loaded: %s%s", path.name, version or "-", message, keeps)

    def _publish(self) -> None:
        loaded = [(path, state.version) for path, state in self._files.items() if state.version is not None]
        self._published = {version.name: version for path, version in loaded if not is_candidate(path)}
        self._candidates = {v.name: v for path, v in loaded if is_candidate(path) and v.name in self._published}
        self.revision += 1

    # -- loading one version ----------------------------------------------------------------------------------

    async def _load(self, source: PluginSource, state: _FileState, *, create: bool | None = None) -> PluginVersion:
        """Load one version; `create` (default: the catalog's mode) starts it, else it is only checked."""
        create = self._create if create is None else create
        name = module_name(source.path, source.version)
        if self.config is not None and self.config.isolation == "process" and (create or self._tg is not None):
            return await self._load_in_worker(source, name, state, create=create)
        with anyio.fail_after(IMPORT_SECONDS):
            loaded = await anyio.to_thread.run_sync(
                import_plugin, source.text, source.path, name, abandon_on_cancel=True
            )
        from toolsets.extensions.plugins.inprocess import InProcessRunner
        from toolsets.extensions.plugins.module import forget

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
        )
        return await self._started(spec, source, runner, create)

    async def _load_in_worker(
        self, source: PluginSource, name: str, state: _FileState, *, create: bool
    ) -> PluginVersion:
        """In a worker process: the plugin's code (its import too) never runs in this one."""
        from toolsets.extensions.plugins.process import ProcessRunner

        assert self._tg is not None
        runner = ProcessRunner(source, name, self._tg.start_soon)
        raw = await runner.load()
        try:
            spec = self._accepted(parse_spec(raw), source.path, state)
        except Exception:
            await runner.stop()
            raise
        hints = spec.hints
        runner.identify(spec.name, self._data_dir(spec, create), retry_safe=hints.read_only or hints.idempotent)
        return await self._started(spec, source, runner, create)

    async def _started(
        self, spec: PluginSpec, source: PluginSource, runner: PluginRunner, create: bool
    ) -> PluginVersion:
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

    def _accepted(self, spec: PluginSpec, path: Path, state: _FileState) -> PluginSpec:
        if spec.name in self.reserved():
            raise PluginSpecError(f"the name {spec.name!r} is a built-in tool's; choose another name")
        candidate = is_candidate(path)
        stable_served = False
        for other_path, other in self._files.items():
            if other is state or other.version is None or other.version.name != spec.name:
                continue
            if is_candidate(other_path) == candidate:
                served = "is already a candidate in" if candidate else "is already served by"
                raise NameRefused(f"the name {spec.name!r} {served} {other_path.name}", spec.name)
            stable_served = True  # (the other kind: for a candidate, its stable file)
        if candidate and not stable_served:
            message = f"a candidate version of {spec.name!r}, but no stable file serves that tool yet"
            raise AwaitsStable(message, spec.name)
        return spec

    def _data_dir(self, spec: PluginSpec, create: bool) -> Path:
        if self.config is None:  # a file checked without a tools folder: nothing runs, nothing is written
            return Path(spec.name)
        folder = self.config.data_dir / spec.name
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
        assert self.config is not None
        while True:
            await anyio.sleep(self.config.poll_seconds)
            try:
                await self.rescan()
            except Exception:
                logger.exception("plugin rescan failed; trying again at the next poll")

    async def _unload(self) -> None:
        async with self._lock:
            versions = [state.version for state in self._files.values() if state.version is not None]
            self._files.clear()
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
                    name=spec.name,
                    version=state.version.version,
                    sha256=state.version.source.digest,
                    label=spec.version,
                    profiles=list(spec.profiles),
                    timeout_s=spec.timeout_s,
                )
            if state.error is not None:
                row.update(error=state.error.message, failed_version=state.error.version)
            rows.append(row)
        return rows
