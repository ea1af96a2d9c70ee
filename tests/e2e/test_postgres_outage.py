"""PostgreSQL restarted under load: calls fail with a clear retryable `store_unavailable` while it is
down, succeed again without restarting the server, and every acknowledged write is still there.

The test runs a private PostgreSQL cluster (initdb in a temp folder, unix socket only, no TCP port),
never the machine's shared server."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.support import error_of, server_for

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own, listening only on a socket in a short temp folder."""

    def __init__(self, workdir: Path) -> None:
        found = [d for d in BIN_DIRS if (d / "initdb").exists()]
        if not found:
            pytest.fail("PostgreSQL's server binaries are not installed (CI installs them: apt-get install postgresql)")
        self.bin = found[0]
        self.workdir = workdir
        self.data = workdir / "data"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:  # the server refuses to run as root: run it as the postgres account
            self.as_owner = ["runuser", "-u", "postgres", "--"]
            shutil.chown(workdir, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/postgres?host={self.workdir}"

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.as_owner, str(self.bin / tool), *args], check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        options = f"-c listen_addresses='' -c unix_socket_directories={self.workdir} -c fsync=on"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.workdir / "log"), "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    with tempfile.TemporaryDirectory(prefix="pg-") as workdir:
        os.chmod(workdir, 0o755)
        server = PrivatePostgres(Path(workdir))
        server.start()
        try:
            yield server
        finally:
            subprocess.run([*server.as_owner, str(server.bin / "pg_ctl"), "-D", str(server.data), "-m", "immediate",
                            "stop"], capture_output=True, timeout=60)  # fmt: skip


@pytest.mark.anyio
async def test_a_restart_mid_load_is_retryable_and_loses_nothing_acknowledged(
    private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    server = server_for(data_dir=tmp_path, database_url=private_postgres.url)
    server.services.backend.pg.acquire_timeout = 2.0  # type: ignore[attr-defined]
    acknowledged: list[str] = []
    refused: list[dict[str, object]] = []

    async def save(client: Client, n: int) -> None:
        result = await client.call_tool("save_memory", {"content": f"note {n} about the quarterly review"})
        if result.is_error:
            refused.append(error_of(result))
        else:
            acknowledged.append(result.structured_content["id"])  # type: ignore[index]

    async with Client(server) as client:
        for n in range(20):
            await save(client, n)
        async with anyio.create_task_group() as tg:  # load continues while the server goes down
            for n in range(20, 40):
                tg.start_soon(save, client, n)
            await anyio.to_thread.run_sync(private_postgres.stop)
        with anyio.fail_after(30):
            await save(client, 40)  # down: refused
        assert refused, "no call was refused while PostgreSQL was down"
        assert {(e["code"], e["retryable"]) for e in refused} == {("store_unavailable", True)}
        assert "cannot be reached" in str(refused[-1]["reason"])

        await anyio.to_thread.run_sync(private_postgres.start)
        with anyio.fail_after(30):
            while True:  # the first calls after the restart may still meet a dropped connection
                before = len(acknowledged)
                await save(client, 41)
                if len(acknowledged) > before:
                    break
                await anyio.sleep(0.2)
        found = await client.call_tool("search_memories", {"query": "quarterly review", "limit": 50})
    ids = {hit["record"]["id"] for hit in found.structured_content["memories"]}  # type: ignore[index]
    assert len(acknowledged) >= 21 and set(acknowledged) <= ids  # every acknowledged save survived the restart
    await server.services.aclose()  # type: ignore[attr-defined]
