"""No import circles among the product's modules, and the layering `server -> bridge -> toolsets` holds.

The graph (tests/import_graph.py) counts lazy imports inside functions too and leaves out TYPE_CHECKING
ones; `python scripts/import_circles.py` prints the same report.
"""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import build_graph, circles, describe, imports_in, layering_violations


def test_no_module_is_part_of_an_import_circle() -> None:
    graph = build_graph()
    found = circles(graph)
    assert not found, describe(found, graph)


def test_toolsets_import_neither_mcp_nor_server_nor_bridge_and_bridge_never_imports_server() -> None:
    assert layering_violations() == []


def test_the_graph_sees_lazy_and_submodule_imports_but_not_type_checking_ones(tmp_path: Path) -> None:
    package = tmp_path / "toolsets"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from toolsets.c import C\n"
        "def f():\n    from toolsets import b\n"
    )
    (package / "b.py").write_text("from .a import f\n")
    (package / "c.py").write_text("import toolsets.a\nimport mcp\n")
    graph = build_graph(tmp_path)
    assert graph["toolsets.a"] == {"toolsets.b": {"b"}}
    assert graph["toolsets.c"] == {"toolsets.a": {"toolsets.a"}}
    assert circles(graph) == [["toolsets.a", "toolsets.b"]]
    assert [found.type_checking for found in imports_in("toolsets.a", package / "a.py", graph)] == [False, True, False]
    assert layering_violations(tmp_path) == ["toolsets/c.py:2: toolsets.c imports mcp"]
