"""docs/architecture.md's house (every package and subpackage with its `__init__` docstring's first sentence and its
modules) and its module table (every module of `server`, `bridge` and `toolsets` with the first line of its
docstring) are what `scripts/module_index.py` prints for the code as it is."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("module_index", ROOT / "scripts" / "module_index.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_house_and_the_module_index_are_the_generated_ones() -> None:
    module = generator()
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert module.with_index(page) == page, "run: python3 scripts/module_index.py --write"
    assert "(no docstring)" not in module.index(), "every module says what it is in its first docstring line"
    assert "(no docstring)" not in module.house(), "every package says what it is in its __init__ docstring"


def test_the_house_names_every_package_and_folder() -> None:
    module = generator()
    house = module.house()
    for package in module.PACKAGES:
        for init in (ROOT / package).rglob("__init__.py"):
            folder = init.parent
            depth = len(folder.relative_to(ROOT).parts)
            if depth <= module.HOUSE_DEPTH:
                assert f"{folder.name}/ " in house, folder
            elif depth == module.HOUSE_DEPTH + 1:  # counted under its parent
                assert f"{folder.name}/," in house or f"{folder.name}/\n" in house, folder
    ignored = {"build", "dist", "node_modules", "__pycache__"}
    folders = {
        path.name
        for path in ROOT.iterdir()
        if path.is_dir() and (not path.name.startswith(".") or path.name == ".ci")
        and not path.name.endswith(".egg-info") and path.name not in ignored
    }  # fmt: skip
    assert folders == {*module.PACKAGES, *module.OTHER_FOLDERS}, "a new folder needs its line in OTHER_FOLDERS"
