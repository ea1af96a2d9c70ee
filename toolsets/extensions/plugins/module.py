"""A plugin's entry points, from the exact text of one version (never re-read from disk: the file may
have changed since). Used by the in-process runner and by the worker process alike."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class PluginImportError(Exception):
    """The file does not import, or does not define what a plugin must; the message says which."""


@dataclass(frozen=True, slots=True)
class PluginModule:
    module: types.ModuleType
    raw_spec: dict[str, Any]
    run: Callable[..., Any] | None
    create: Callable[..., Any] | None

    @property
    def name(self) -> str:
        return self.module.__name__


def module_name(path: Path, version: str) -> str:
    """Unique per version, so two versions of one file never share a module object."""
    stem = re.sub(r"\W", "_", path.stem)
    return f"truloop_plugin_{stem}_{version}"


def import_plugin(text: str, path: Path, name: str) -> PluginModule:
    """Execute `text` as a fresh module (registered in sys.modules while loaded) and find its entry points."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # dataclasses, pickling and typing look modules up by name
    try:
        code = compile(text, str(path), "exec")
        exec(code, module.__dict__)
        return _entry_points(module)
    except SyntaxError as exc:
        forget(name)
        raise PluginImportError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except PluginImportError:
        forget(name)
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt too: a plugin's import must never stop the server
        forget(name)
        raise PluginImportError(f"importing it raised {type(exc).__name__}: {exc}") from None


def forget(name: str) -> None:
    sys.modules.pop(name, None)


def fitted(function: Callable[..., Any], *args: Any) -> tuple[Any, ...]:
    """The leading `args` that `function` takes: `run(input_data)` without a context parameter works too."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return args
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return args
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return args[: len(positional)]


SPEC_VARIABLES = {"TOOL_SPEC": "tool", "RESOURCE_SPEC": "resource", "PROMPT_SPEC": "prompt"}


def _entry_points(module: types.ModuleType) -> PluginModule:
    """The spec the file defines (exactly one of TOOL_SPEC, RESOURCE_SPEC and PROMPT_SPEC), stamped with its kind,
    and `run` / `create`."""
    namespace = module.__dict__
    defined = [variable for variable in SPEC_VARIABLES if variable in namespace]
    if len(defined) > 1:
        raise PluginImportError(f"it defines {' and '.join(defined)}; a plugin file serves one thing: define one")
    variable = defined[0] if defined else "TOOL_SPEC"
    raw_spec = namespace.get(variable)
    if not isinstance(raw_spec, dict):
        found = "no TOOL_SPEC" if raw_spec is None else f"{variable} as a {type(raw_spec).__name__}"
        raise PluginImportError(
            f"it defines {found}; a plugin defines TOOL_SPEC, RESOURCE_SPEC or PROMPT_SPEC = {{...}} (a dict)"
        )
    kind = SPEC_VARIABLES[variable]
    if raw_spec.get("kind", kind) != kind:
        raise PluginImportError(f"{variable} says kind {raw_spec.get('kind')!r}; leave kind out (it is {kind!r})")
    run, create = namespace.get("run"), namespace.get("create")
    for label, value in (("run", run), ("create", create)):
        if value is not None and not callable(value):
            raise PluginImportError(f"{label} is a {type(value).__name__}, not a function")
    if run is None and create is None:
        raise PluginImportError("it defines neither run(input_data, context) nor create(context)")
    return PluginModule(module, {**raw_spec, "kind": kind}, run, create)
