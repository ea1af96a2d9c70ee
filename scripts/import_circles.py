#!/usr/bin/env python3
"""Print the import circles among server/, bridge/ and toolsets/ (each with the imports that tie it) and their
count; exit 1 when there is any. The same check as tests/project/test_import_circles.py.

    python scripts/import_circles.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.import_graph import build_graph, circles, describe


def main() -> int:
    graph = build_graph()
    found = circles(graph)
    print(describe(found, graph))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
