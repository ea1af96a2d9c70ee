"""`truloop-mcp db migrate|status|copy`: the store's schema and contents, for operators."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolsets.services import Services


async def migrate(services: Services) -> None:
    """Apply every component's pending migrations (under the migration lock on PostgreSQL)."""
    try:
        done = await services.backend.migrate()
    finally:
        await services.aclose()
    print(f"store: {services.backend.describe()}")
    for component, version in done.items():
        print(f"  {component}: schema version {version}")


async def status(services: Services) -> None:
    """Each component's schema version beside the program's, and its tables' row counts. Exits 1 when a
    component is newer than this program (it would be refused) or not created yet."""
    from server.cli.operator_commands import CommandError
    from toolsets.infra.store.inventory import TABLES

    backend = services.backend
    try:
        found = await backend.versions()
        known = {component: len(steps) for component, steps in backend.migrations().items()}
        counts = {table: await backend.count_rows(table) for names in TABLES.values() for table in names}
    finally:
        await services.aclose()
    print(f"store: {backend.describe()}")
    problems = []
    for component, version in found.items():
        state = "current" if version == known[component] else "newer than this program" if version > known[component] \
            else "pending migration"  # fmt: skip
        if version > known[component]:
            problems.append(component)
        rows = ", ".join(f"{table} {counts[table]}" for table in TABLES[component])
        print(f"  {component}: schema {version} of {known[component]} ({state}); rows: {rows}")
    if problems:
        raise CommandError(f"the store's {', '.join(problems)} schema is newer than this program; upgrade truloop-mcp")


def copy(source: str, target: str) -> None:
    """`--from sqlite:PATH --to postgresql://...`: copy, then show each table's counts and checksums."""
    import anyio

    from server.cli.operator_commands import CommandError

    if not source.startswith("sqlite:"):
        raise CommandError(f"--from must be sqlite:PATH (the embedded store's truloop.sqlite3); got {source!r}")
    if not target.startswith(("postgresql://", "postgres://")):
        raise CommandError("--to must be a URL such as postgresql://user:password@host:5432/truloop")
    path = Path(source.removeprefix("sqlite:")).expanduser()
    anyio.run(_copy, path / "truloop.sqlite3" if path.is_dir() else path, target)


async def _copy(path: Path, target: str) -> None:
    from server.cli.operator_commands import CommandError
    from toolsets.infra.store.copy import copy_sqlite_to_postgres
    from toolsets.infra.store.postgres.backend import PostgresBackend

    backend = PostgresBackend(target)
    try:
        tables = await copy_sqlite_to_postgres(path, backend, report=print)
    finally:
        await backend.aclose()
    print(f"{'table':<18} {'rows':>8} {'copied':>8}  sha256 (source = target)")
    for table in tables:
        mark = "ok" if table.equal else "DIFFERENT"
        print(f"{table.table:<18} {table.source_rows:>8} {table.target_rows:>8}  {table.source_checksum[:16]} {mark}")
    if not all(table.equal for table in tables):
        raise CommandError("the copy differs from the source (see above); the target was left as written")
    print(f"copied {sum(t.source_rows for t in tables)} rows; every table's count and checksum match")
