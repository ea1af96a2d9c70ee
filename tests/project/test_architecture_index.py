"""docs/architecture.md names every module of `server`, `bridge` and `toolsets`, with the first line of its docstring:
its generated table is what `scripts/module_index.py` prints for the code as it is."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_module_index_is_the_generated_one() -> None:
    spec = importlib.util.spec_from_file_location("module_index", ROOT / "scripts" / "module_index.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert module.with_index(page) == page, "run: python3 scripts/module_index.py --write"
    assert "(no docstring)" not in module.index(), "every module says what it is in its first docstring line"
