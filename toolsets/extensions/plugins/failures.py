"""How a plugin's failures are told apart: contained, and classed for the canary rules.

Light on purpose (the worker process imports it). Three things:

- `contained(exc)`: whatever a plugin raised, as an `Exception` the call path can settle. `SystemExit`
  (argparse on bad input), `KeyboardInterrupt`, `GeneratorExit` and any other `BaseException` raised by a
  plugin end that call only; the stand-in keeps the original's class name, which is all the model sees.
- `fatal_kind(exc)`: whether an error is one the canary rolls back on at once (a single event), and which:
  `permission` (a `PermissionError`, or a class the plugin names `PermissionDenied` / `PermissionDeniedError`),
  `data_damage` (a class the plugin names `DataDamage` / `DataDamageError` / `DataCorruption` /
  `DataCorruptionError`), or `process_died` (its worker process ended under it). An exception may also say so
  itself with a class attribute `canary_fatal = "permission"` or `"data_damage"`. Every other exception is an
  ordinary error, which counts toward the error rate.
- `PluginWorkerCrashed`: the call whose worker process died under it (`--plugin-isolation process`).
"""

from __future__ import annotations

from typing import Literal

FatalKind = Literal["permission", "data_damage", "process_died"]
PERMISSION_CLASSES = frozenset({"PermissionError", "PermissionDenied", "PermissionDeniedError"})
DATA_DAMAGE_CLASSES = frozenset({"DataDamage", "DataDamageError", "DataCorruption", "DataCorruptionError"})
FATAL_KINDS: frozenset[str] = frozenset({"permission", "data_damage", "process_died"})
DESCRIBED: dict[str, str] = {
    "permission": "a permission error",
    "data_damage": "data damage",
    "process_died": "its worker process died",
}


class PluginAborted(Exception):  # noqa: N818 - a stand-in, named after what the plugin raised
    """A plugin raised a `BaseException` that is not an `Exception`; the stand-in ends only that call."""


class PluginWorkerCrashed(Exception):  # noqa: N818 - the name the model sees ("internal error (PluginWorkerCrashed)")
    """The worker process ended while this call was running in it (the call that brought it down)."""

    canary_fatal = "process_died"


def stand_in(type_name: str, message: str, *, base: type[Exception] = Exception, fatal: str | None = None) -> Exception:
    """An exception named `type_name` (the model sees only the name), carrying `message` for the log."""
    safe = type_name if type_name.isidentifier() else "PluginError"
    namespace: dict[str, object] = {"__module__": "plugin"}
    if fatal in FATAL_KINDS:
        namespace["canary_fatal"] = fatal
    return type(safe, (base,), namespace)(message)


def contained(exc: BaseException) -> Exception:
    """`exc` itself when it is an `Exception`; else a `PluginAborted` named after it (never re-raised as is)."""
    if isinstance(exc, Exception):
        return exc
    return stand_in(type(exc).__name__, f"the plugin raised {type(exc).__name__}: {exc}", base=PluginAborted)


def fatal_kind(exc: BaseException) -> FatalKind | None:
    marked = getattr(type(exc), "canary_fatal", None)
    if marked in FATAL_KINDS:
        return marked
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & PERMISSION_CLASSES:
        return "permission"
    if names & DATA_DAMAGE_CLASSES:
        return "data_damage"
    return None
