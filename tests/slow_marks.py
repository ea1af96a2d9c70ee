"""Which tests are `slow`: every test that starts a process (a server over stdio or HTTP, a host, `truloop-mcp`
itself, a sandbox), found in its own source, the fixtures it asks for, and the functions of its module it calls,
so `-m "not slow"` leaves out exactly those and no test has to remember to say so."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

SPAWNS = re.compile(
    r"\b(?:stdio_server_process|http_server_process|spawn_http_server|device_ready_http_server|stdio_client"
    r"|StdioServerParameters|create_subprocess_exec|create_subprocess_shell|subprocess\.(?:run|Popen|check_output"
    r"|check_call|call)|Sandbox\(|bwrap)\b"
)
_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _source(function: Callable[..., Any]) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def spawning_functions(module: ModuleType) -> set[str]:
    """The module's functions that start a process, directly or through another of its functions."""
    functions = {name: value for name, value in vars(module).items() if inspect.isfunction(value)}
    sources = {name: _source(value) for name, value in functions.items() if value.__module__ == module.__name__}
    found = {name for name, text in sources.items() if SPAWNS.search(text)}
    while True:  # one function calling another that spawns spawns too
        more = {name for name, text in sources.items() if name not in found and _calls(text) & found}
        if not more:
            return found
        found |= more


def _calls(text: str) -> set[str]:
    return set(_NAME.findall(text))


def spawns(test: Callable[..., Any], fixtures: Iterable[Callable[..., Any]], module_spawners: set[str]) -> bool:
    for function in (test, *fixtures):
        text = _source(function)
        if SPAWNS.search(text) or _calls(text) & module_spawners:
            return True
    return False
