"""Gate middleware overhead over stdio: `get_day_of_week` with no gates vs with 50 gates declared.

The 50 gates are a worst case for the called tool: every one lists `get_day_of_week` among the tools
it waits for (so each of its calls is remembered, values included), none guards it. Two servers run
side by side over pipes; calls alternate between them; p50/p99 per server.

    python bench/gates_bench.py [--calls 2000] [--warmup 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from stdio_session import StdioSession

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))


def fifty_gates() -> str:
    from toolsets.profiles import assistant_toolsets, tool_arguments

    known = tool_arguments(assistant_toolsets(exposure="progressive").values())

    fixed = {"get_day_of_week", "get_current_datetime", "list_toolsets", "load_toolset", "search_tools"}
    tools = sorted(name for name in known if name not in fixed)
    args = known
    lines = ["builtin = false"]
    count = 0
    while count < 50:
        for tool in tools:
            if count == 50:
                break
            argument = sorted(args[tool])[0] if args[tool] and count % 2 else None
            after = '["get_day_of_week", "get_current_datetime"]'
            if argument:
                lines.append(
                    f'[[gate]]\nkind = "same_value"\ntool = "{tool}"\nargument = "{argument}"\nafter = {after}'
                )
            else:
                lines.append(f'[[gate]]\nkind = "requires"\ntool = "{tool}"\nafter = {after}')
            count += 1
    return "\n\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="truloop-gates-bench-") as scratch:
        root = Path(scratch)
        none = root / "none.toml"
        none.write_text("builtin = false\n", encoding="utf-8")
        fifty = root / "fifty.toml"
        fifty.write_text(fifty_gates(), encoding="utf-8")
        servers = {
            name: StdioSession("--gates", str(path), "--data-dir", str(root / name[:2]), "--audit-log", "off")
            for name, path in (("no gates", none), ("50 gates", fifty))
        }
        samples: dict[str, list[float]] = {name: [] for name in servers}
        for round_no in range(options.warmup + options.calls):
            for name, server in servers.items():
                elapsed, _ = server.call("get_day_of_week", {"date": "2026-03-10"})
                if round_no >= options.warmup:
                    samples[name].append(elapsed)
        for server in servers.values():
            server.close()
    print(f"# {options.calls} sequential get_day_of_week calls per server over stdio, interleaved")
    base = statistics.median(samples["no gates"])
    for name, values in samples.items():
        values.sort()
        p50, p99 = statistics.median(values), values[int(len(values) * 0.99) - 1]
        print(f"{name:10s} p50 {p50 * 1000:.3f} ms  p99 {p99 * 1000:.3f} ms  p50 vs no gates {p50 / base:.3f}x")


if __name__ == "__main__":
    main()
