"""The one configuration: flags over environment over defaults, one line for any bad value, secrets kept
secret, and --help and the docs/settings.md table generated from the one model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from server.cli.serve_command import build_parser
from server.settings import Settings, load_settings, sources
from server.settings_text import explain, markdown_table
from tests.support import TRULOOP, child_env

ROOT = Path(__file__).resolve().parents[2]
STRONG = "k3Y-" + "abcdefghijklmnopqrstuvwxyz0123456789"  # 40 bytes, no repeated pattern
WEAK_SECRET = "weak-but-private-value"  # too short, and must never be echoed
PASSWORD = "hunter2-redis-password"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, *args], capture_output=True, text=True, timeout=30, env=child_env(**env))


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"TRULOOP_DEFERRED_TIMEOUT": "abc"}, "--deferred-timeout / TRULOOP_DEFERRED_TIMEOUT: must be a number"),
        ({"TRULOOP_MAX_LINE_BYTES": "-1"}, "TRULOOP_MAX_LINE_BYTES: must be a whole number from 1024 to"),
        ({"TRULOOP_MAX_DEVICE_STREAMS_PER_USER": "lots"}, "TRULOOP_MAX_DEVICE_STREAMS_PER_USER: must be a whole"),
        ({"TRULOOP_CONFIRM": "maybe"}, "--confirm / TRULOOP_CONFIRM: must be one of auto, strict, off; got 'maybe'"),
        ({"TRULOOP_LOG_LEVEL": "loud"}, "TRULOOP_LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR"),
        ({"TRULOOP_TIMEZONE": "Mars/Base"}, "--timezone / TRULOOP_TIMEZONE:"),
        ({"TRULOOP_USER": "x" * 201}, "--user / TRULOOP_USER:"),
        ({"TRULOOP_REDIS_PREFIX": "p" * 101}, "TRULOOP_REDIS_PREFIX:"),
        ({"TRULOOP_JWT_SECRET": WEAK_SECRET}, "TRULOOP_JWT_SECRET: the secret must be at least 32 bytes"),
        ({"TRULOOP_STATE_KEYS": f"{STRONG},{WEAK_SECRET}"}, "TRULOOP_STATE_KEYS: every entry must be at least 32"),
        ({"REDIS_URL": f"http://admin:{PASSWORD}@db:6379"}, "--redis-url / REDIS_URL: must be a URL such as redis://"),
        ({"SENDBIRD_APP_ID": "evil.example.com/x"}, "SENDBIRD_APP_ID: a Sendbird application id is"),
        ({"SENDBIRD_CHANNEL_URL_TEMPLATE": "agent-{user}"}, "SENDBIRD_CHANNEL_URL_TEMPLATE: a channel URL template"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it_and_exit_2(env: dict[str, str], needle: str) -> None:
    proc = run(**env)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("truloop-mcp: error: ") and needle in lines[0], lines[0]
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert WEAK_SECRET not in proc.stderr and PASSWORD not in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--deferred-timeout", "soon"], "--deferred-timeout / TRULOOP_DEFERRED_TIMEOUT: must be a number"),
        (["--deferred-timeout", "0"], "must be a number above 0 and at most 3600"),
        (["--max-line-bytes", "-1"], "--max-line-bytes / TRULOOP_MAX_LINE_BYTES: must be a whole number"),
        (["--log-level", "loud"], "--log-level / TRULOOP_LOG_LEVEL: must be one of"),
        (["--port", "-1", "--confirm", "maybe"], "--port: must be a whole number from 0 to 65535"),
    ],
)
def test_a_bad_flag_is_one_line_naming_it_and_exit_2(args: list[str], needle: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr


def test_the_operator_commands_read_the_same_settings(tmp_path: Path) -> None:
    proc = subprocess.run(
        [TRULOOP, "notion", "sync", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=30, env=child_env(TRULOOP_DEFERRED_TIMEOUT="abc"),
    )  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "TRULOOP_DEFERRED_TIMEOUT: must be a number" in proc.stderr


def test_flags_win_over_variables_which_win_over_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings({}).user == "local"
    monkeypatch.setenv("TRULOOP_USER", "bob")
    monkeypatch.setenv("TRULOOP_DEFERRED_TIMEOUT", "12.5")
    monkeypatch.setenv("TRULOOP_ALLOWED_HOSTS", "a.example.com:*, b.example.com:443")
    monkeypatch.setenv("TRULOOP_CONFIRM", "")  # empty: unset
    from_env = load_settings({})
    assert from_env.user == "bob" and from_env.deferred_timeout == 12.5 and from_env.confirm == "auto"
    assert from_env.allowed_hosts == ("a.example.com:*", "b.example.com:443")
    flagged = load_settings({"user": "carol", "allowed_hosts": ["c.example.com:*"], "deferred_timeout": "30"})
    assert flagged.user == "carol" and flagged.allowed_hosts == ("c.example.com:*",) and flagged.deferred_timeout == 30


def test_only_the_declared_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOST", "PORT", "host", "port", "user", "USER", "TRANSPORT", "PROFILE"):
        monkeypatch.setenv(name, "0.0.0.0" if "host" in name.lower() else "1")
    settings = load_settings({})
    assert (settings.host, settings.port, settings.user, settings.transport) == ("127.0.0.1", 8000, "local", "stdio")


def test_constructing_settings_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRULOOP_USER", "bob")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    built = Settings(user="alice", timezone="Asia/Seoul", profile="guest", jwt_secret=STRONG)
    assert built.user == "alice" and built.redis_url is None and built.auth_enabled


def test_secrets_stay_out_of_reprs_and_errors() -> None:
    settings = Settings(
        jwt_secret=STRONG,
        state_keys=f"{STRONG}x,{STRONG}y",
        redis_url=f"redis://:{PASSWORD}@127.0.0.1:6379/0",
        google_maps_api_key="gmaps-key-1234567890",
        supermemory_api_key="sm-key-1234567890",
        notion_token="secret_notion_1234567890",
        sendbird_app_id="A1B2",
        sendbird_api_token="sb-token-1234567890",
    )
    shown = repr(settings) + str(settings) + repr(settings.upstream_keys)
    for secret in (STRONG, PASSWORD, "gmaps-key", "sm-key", "secret_notion", "sb-token"):
        assert secret not in shown
    assert isinstance(settings.jwt_secret, SecretStr) and settings.jwt_secret.get_secret_value() == STRONG
    assert [key.get_secret_value()[-1] for key in settings.state_keys] == ["x", "y"]
    assert settings.upstream_keys.notion == SecretStr("secret_notion_1234567890")
    with pytest.raises(ValidationError) as refused:
        Settings(jwt_secret=WEAK_SECRET, state_keys=["n" * 40])
    line = explain(refused.value)
    assert "TRULOOP_JWT_SECRET: " in line and "TRULOOP_STATE_KEYS: " in line and "\n" not in line
    assert WEAK_SECRET not in line and "n" * 40 not in line


def test_a_blank_upstream_key_is_unset() -> None:
    assert Settings(supermemory_api_key="  ", notion_token="").upstream_keys.supermemory is None


def test_every_setting_declares_where_it_comes_from() -> None:
    declared = sources()
    assert set(declared) == set(Settings.model_fields)
    for name, source in declared.items():
        assert source.flag or source.env, name
        assert source.help and not source.help.endswith("."), name
    flags = [s.flag for s in declared.values() if s.flag]
    envs = [s.env for s in declared.values() if s.env]
    assert len(flags) == len(set(flags)) and len(envs) == len(set(envs))


def test_help_is_generated_from_the_model() -> None:
    text = build_parser().format_help()
    for source in sources().values():
        for name in (source.flag, source.env):
            if name:
                assert re.search(rf"(^|\s|\[){re.escape(name)}\b", text), name
    assert "`" not in text.split("subcommands (run instead")[0]  # markdown marks are for docs/settings.md only


def test_the_settings_page_table_is_the_generated_one() -> None:
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    section = page.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert "\n".join(table) + "\n" == markdown_table(), "regenerate it: python -m server.settings_text --markdown"
    printed = subprocess.run(
        [sys.executable, "-m", "server.settings_text", "--markdown"], capture_output=True, text=True, timeout=30
    )
    assert printed.returncode == 0 and printed.stdout == markdown_table()


def embedded_env() -> dict[str, str]:
    """A newcomer's machine: no shared service configured (CI exports REDIS_URL for the other tests)."""
    return {k: v for k, v in child_env().items() if k not in ("REDIS_URL", "DATABASE_URL")}


@pytest.mark.parametrize("args", [["--help"], []], ids=["help", "stdio-start"])
def test_help_and_stdio_start_load_no_http_redis_or_jwt(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "server", *args, "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, env=embedded_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "server.settings" in loaded
    assert not loaded & {"httpx", "redis", "jwt"}, sorted(loaded & {"httpx", "redis", "jwt"})
