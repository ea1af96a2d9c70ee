"""Replicas behind a balancer accept each other's tokens only when they share `--public-url`: the deployment
checklist names it, and a replica without it (on a shared store, with a secret) says so at start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support import SECRET, TRULOOP, child_env, http_server_process

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
REDIS = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
PUBLIC = "https://mcp.example.com"


def replica_env(**extra: str) -> dict[str, str]:
    """A replica's environment: the secret, the shared Redis, and no test audience (child_env would add one)."""
    return {**child_env(), "TRULOOP_JWT_SECRET": SECRET, "REDIS_URL": REDIS, "TRULOOP_REDIS_PREFIX": "edges:", **extra}


def initialize(base: str, bearer: str) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"}
    return httpx.post(f"{base}/mcp", json=body, headers=headers, timeout=15).status_code


def test_the_deployment_checklist_names_the_public_url() -> None:
    page = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    section = page.split("\n## Several replicas\n", 1)[1].split("\n## ", 1)[0]
    checklist = section.split("| what | setting | what it holds |", 1)[1].split("\n\n", 1)[0]
    assert "`--public-url` / `TRULOOP_PUBLIC_URL`" in checklist


def test_replicas_sharing_the_public_url_accept_each_others_tokens(tmp_path: Path) -> None:
    env = replica_env(TRULOOP_PUBLIC_URL=PUBLIC)
    minted = subprocess.run(
        [TRULOOP, "token", "--user", "alice"], capture_output=True, text=True, timeout=30, env=env, check=True
    )
    bearer = minted.stdout.strip()
    with (
        http_server_process("--data-dir", str(tmp_path / "a"), env=env) as (first, _, first_log),
        http_server_process("--data-dir", str(tmp_path / "b"), env=env) as (second, _, second_log),
    ):
        assert first != second
        assert initialize(first, bearer) == 200 and initialize(second, bearer) == 200
        assert "--public-url" not in first_log.read_text() + second_log.read_text()


def test_a_replica_without_a_public_url_says_which_audience_it_takes(tmp_path: Path) -> None:
    with http_server_process("--data-dir", str(tmp_path / "a"), env=replica_env()) as (base, _, log):
        text = log.read_text()
    assert f"this server accepts only tokens for {base}/mcp" in text
    assert "give every replica the same --public-url" in text
