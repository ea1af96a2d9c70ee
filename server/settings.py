"""The one configuration: every setting, its flag, its environment variable and its help, declared once.

`load_settings(flags)` reads flags over environment variables over defaults; this is the only module that
reads the environment. `Settings(...)` alone takes only what it is given (tests build it in-process).
`--help` (server/cli/), one-line errors and the README's table (server/settings_text.py) come from the fields.
"""

# No `from __future__ import annotations` here: pydantic would compile every field's annotation from its string
# when the model is built, at each start.
import enum
import ipaddress
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from toolsets.core.context import ConfirmPolicy
from toolsets.profile_names import PROFILE_NAMES

if TYPE_CHECKING:
    from toolsets.admission.limits import Limits
    from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox
    from toolsets.infra.upstream.keys import UpstreamKeys

Transport = Literal["stdio", "sse", "http"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


@dataclass(frozen=True, slots=True)
class Source:
    """Where a setting comes from and how it is documented. `help` may use `backticks` (the README keeps
    them, --help drops them); `shown` is the documented default when the value is computed or unset."""

    help: str
    flag: str | None = None
    env: str | None = None
    metavar: str | None = None
    shown: str | None = None


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "truloop"


def local_timezone() -> str:
    """The machine's IANA zone (TZ, then /etc/localtime), else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if (tz and "/" in tz) or tz == "UTC":
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
        marker = "zoneinfo/"
        if marker in target:
            return target.split(marker, 1)[1]
    except OSError:
        pass
    return "UTC"


def machine_locale(environ: Mapping[str, str]) -> str:
    from toolsets.infra.locality import machine_locale as read

    return read(environ)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_secret(name: str, value: str) -> None:
    if len(value.encode()) < 32:
        raise ValueError(f"{name} must be at least 32 bytes (HS256 needs a key as long as its hash)")
    if len(set(value)) < 5 or any(value == value[:n] * (len(value) // n) for n in range(1, 5) if len(value) % n == 0):
        raise ValueError(
            f"{name} is too easy to guess (a repeated pattern); generate one with: "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'"
        )


def _host_of(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or ""


def _web_url(value: str, example: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL such as {example}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"must be a plain URL without query, fragment or credentials, such as {example}")
    return value


class Settings(BaseSettings):
    # validate_default stays off: a computed default (the data folder) is checked only when it is used
    model_config = SettingsConfigDict(frozen=True, extra="forbid", validate_default=False)

    transport: Annotated[
        Transport,
        Source(
            "`http` serves streamable HTTP at `/mcp`; the same HTTP app also serves legacy SSE at `/sse` + "
            "`/messages/` (so `sse` and `http` start the same app)",
            flag="--transport",
        ),
    ] = "stdio"
    host: Annotated[str, Source("HTTP bind address", flag="--host", metavar="ADDRESS")] = "127.0.0.1"
    port: Annotated[
        int,
        Source(
            "HTTP port; `0` picks a free one (stderr says which: `truloop-mcp: serving http://127.0.0.1:PORT/mcp`)",
            flag="--port",
            metavar="N",
        ),
    ] = Field(default=8000, ge=0, le=65535)
    profile: Annotated[
        str,
        Source(
            "toolsets published on stdio and on unauthenticated loopback HTTP (with a JWT secret the token's "
            "role decides)",
            flag="--profile",
            metavar="|".join(PROFILE_NAMES),
        ),
    ] = "member"
    user: Annotated[
        str,
        Source(
            "identity on stdio (and unauthenticated loopback HTTP)", flag="--user", env="TRULOOP_USER", metavar="ID"
        ),
    ] = Field(default="local", min_length=1, max_length=200)
    timezone: Annotated[
        str,
        Source(
            "the IANA zone of callers whose token and directory entry name none (the `--user`'s on stdio; "
            '"today" for `get_day_of_week`)',
            flag="--timezone",
            env="TRULOOP_TIMEZONE",
            metavar="ZONE",
            shown="this machine's zone",
        ),
    ] = Field(default_factory=local_timezone)
    locale: Annotated[
        str,
        Source(
            "the language (a BCP 47 tag such as `ko-KR` or `en`) of callers whose token and directory entry name "
            "none, as `--timezone` is their zone (docs/sign-in.md)",
            flag="--locale",
            env="TRULOOP_LOCALE",
            metavar="TAG",
            shown="this machine's (`LC_ALL`/`LANG`: `ko_KR.UTF-8` is `ko-KR`), else `en`",
        ),
    ] = Field(default_factory=lambda: machine_locale(os.environ))
    data_dir: Annotated[
        Path,
        Source(
            "embedded store",
            flag="--data-dir",
            env="TRULOOP_DATA_DIR",
            metavar="DIR",
            shown="`$XDG_DATA_HOME/truloop` or `~/.local/share/truloop`",
        ),
    ] = Field(default_factory=default_data_dir)
    docs_dir: Annotated[
        Path | None,
        Source(
            "knowledge-base folder", flag="--docs", env="TRULOOP_DOCS_DIR", metavar="DIR", shown="`<data-dir>/docs`"
        ),
    ] = None
    redis_url: Annotated[
        SecretStr | None,
        Source(
            "pending calls, device presence and wake-ups shared by several replicas (kept secret: it may hold "
            "a password)",
            flag="--redis-url",
            env="REDIS_URL",
            metavar="URL",
        ),
    ] = Field(default=None, repr=False)
    redis_prefix: Annotated[str, Source("prefix of every Redis key", env="TRULOOP_REDIS_PREFIX")] = Field(
        default="truloop:", min_length=1, max_length=100
    )
    database_url: Annotated[
        SecretStr | None,
        Source(
            "PostgreSQL shared by several replicas for every domain store (users, events, memories, inbox, "
            "knowledge index), e.g. `postgresql://truloop:PASSWORD@db:5432/truloop`; unset: SQLite in "
            "`--data-dir` (kept secret: it may hold a password)",
            flag="--database-url",
            env="DATABASE_URL",
            metavar="URL",
        ),
    ] = Field(default=None, repr=False)
    schedule_min_interval: Annotated[
        float,
        Source(
            "seconds: no schedule of tool runs may fire more often (`schedule_tool_run`)",
            flag="--schedule-min-interval",
            env="TRULOOP_SCHEDULE_MIN_INTERVAL",
            metavar="SECONDS",
        ),
    ] = Field(default=60.0, ge=1, le=86_400)
    wait_for_store: Annotated[
        float,
        Source(
            "at start, how long to wait for `--database-url` and `--redis-url` to answer; 0: one attempt of a few "
            "seconds, then the server exits naming the store it cannot reach",
            flag="--wait-for-store",
            env="TRULOOP_WAIT_FOR_STORE",
            metavar="SECONDS",
        ),
    ] = Field(default=0.0, ge=0, le=3600)
    deferred_timeout: Annotated[
        float,
        Source(
            "seconds a deferred tool waits for the device",
            flag="--deferred-timeout",
            env="TRULOOP_DEFERRED_TIMEOUT",
            metavar="SECONDS",
        ),
    ] = Field(default=300.0, gt=0, le=3600)
    demo: Annotated[bool, Source("seed a small demo data set into an empty store", flag="--demo")] = False
    confirm: Annotated[
        ConfirmPolicy,
        Source(
            "confirmation of destructive tools (see *Confirming destructive tools*)",
            flag="--confirm",
            env="TRULOOP_CONFIRM",
        ),
    ] = ConfirmPolicy.AUTO
    exposure: Annotated[
        Literal["full", "progressive", "code"],
        Source(
            "tools published at once (`full`), datetime tools + loaders first (`progressive`; see "
            "*Progressive exposure and gates*), or only `search_tools`, the loaders and `execute_code` (`code`: "
            "turns on `--code-mode`; see docs/code-mode.md)",
            flag="--exposure",
            env="TRULOOP_EXPOSURE",
        ),
    ] = "full"
    gates: Annotated[
        Path | None,
        Source(
            "TOML file of gates (which tools run only after which); the built-in read-before-write gates "
            "apply without it",
            flag="--gates",
            env="TRULOOP_GATES",
            metavar="FILE",
        ),
    ] = None
    tools_dir: Annotated[
        Path | None,
        Source(
            "folder of plugins: `*.py` files each serving a tool, a resource or a prompt (`TOOL_SPEC`, "
            "`RESOURCE_SPEC` or `PROMPT_SPEC`, and `run`), reloaded within a second of a change "
            "(see *Writing a plugin*)",
            flag="--tools-dir",
            env="TRULOOP_TOOLS_DIR",
            metavar="DIR",
        ),
    ] = None
    plugin_isolation: Annotated[
        Literal["inprocess", "process", "sandbox"],
        Source(
            "where plugins run: in the server's process (fastest), each in a supervised worker process that is "
            "restarted after a crash or a hung call, or that worker inside a bubblewrap sandbox as an unprivileged "
            "user (for third-party plugins; always, whatever this says, with `--tool-authoring`)",
            flag="--plugin-isolation",
            env="TRULOOP_PLUGIN_ISOLATION",
        ),
    ] = "inprocess"
    plugin_network: Annotated[
        bool,
        Source(
            "let sandboxed plugins and the tools the model writes use the network (the host's, this server's own "
            "ports included)",
            flag="--plugin-network",
            env="TRULOOP_PLUGIN_NETWORK",
        ),
    ] = False
    max_resource_bytes: Annotated[
        int,
        Source(
            "bytes of one plugin resource's contents; a larger read is refused with an error, and no more than that "
            "is read from the plugin (see docs/plugins.md)",
            flag="--max-resource-bytes",
            env="TRULOOP_MAX_RESOURCE_BYTES",
            metavar="BYTES",
        ),
    ] = Field(default=8 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    tool_authoring: Annotated[
        bool,
        Source(
            "let the model manage its own tools in --tools-dir: `list_custom_tools`, `tool_registry_status`, "
            "`create_or_update_custom_tool_file`, `delete_custom_tool_file`, `reload_custom_tools` (stdio only, unless "
            "`--tool-authoring-http`; a new tool is checked and tried before it serves, a changed one goes through the "
            "canary; see *Writing a plugin*); the folder's code then runs only in the plugin sandbox",
            flag="--tool-authoring",
            env="TRULOOP_TOOL_AUTHORING",
        ),
    ] = False
    tool_authoring_http: Annotated[
        bool,
        Source("also publish the tool-authoring tools over HTTP, to member tokens only", flag="--tool-authoring-http"),
    ] = False
    workspace: Annotated[
        Path | None,
        Source(
            "publish `list_files`, `read_file`, `write_file`, `run_shell` and `run_python`, confined to this folder "
            "(stdio only, unless `--workspace-http`; see *Workspace tools*)",
            flag="--workspace",
            env="TRULOOP_WORKSPACE",
            metavar="DIR",
        ),
    ] = None
    workspace_strict: Annotated[
        bool,
        Source(
            "workspace paths and `run_shell` commands without `..`, absolute paths or shell metacharacters, and "
            "commands only of the programs on `--workspace-allow`",
            flag="--workspace-strict",
        ),
    ] = False
    workspace_http: Annotated[
        bool, Source("also publish the workspace tools over HTTP, to member tokens only", flag="--workspace-http")
    ] = False
    workspace_allow: Annotated[
        tuple[str, ...],
        Source(
            "with `--workspace-strict`: a program `run_shell` may run (repeatable, replaces the built-in list; the "
            "variable is comma-separated); `python3` allows `run_python`. Listing an interpreter, `sed`, `awk`, "
            "`xargs` or `tar` lets commands run anything inside the sandbox",
            flag="--workspace-allow",
            env="TRULOOP_WORKSPACE_ALLOW",
            metavar="PROGRAM",
            shown="`ls`, `cat`, `grep`, `find`, `cp`, `mv`, ... (see *Workspace tools*)",
        ),
    ] = ()
    workspace_network: Annotated[
        bool,
        Source(
            "let `run_shell` and `run_python` use the network (the host's, this server's own ports included)",
            flag="--workspace-network",
            env="TRULOOP_WORKSPACE_NETWORK",
        ),
    ] = False
    workspace_unsandboxed: Annotated[
        bool,
        Source(
            "UNSAFE: run `run_shell` and `run_python` without the bubblewrap sandbox, as the server's user with "
            "access to everything it can reach (only a clean environment, the limits and the time limit remain)",
            flag="--workspace-unsandboxed",
            env="TRULOOP_WORKSPACE_UNSANDBOXED",
        ),
    ] = False
    code_mode: Annotated[
        bool,
        Source(
            "publish `execute_code` to members: one short Python program, run in the bubblewrap sandbox, that calls "
            "their tools through the front door (see docs/code-mode.md)",
            flag="--code-mode",
            env="TRULOOP_CODE_MODE",
        ),
    ] = False
    code_mode_guests: Annotated[
        bool,
        Source(
            "with code mode, publish `execute_code` to guests too (their programs reach guest tools only)",
            flag="--code-mode-guests",
            env="TRULOOP_CODE_MODE_GUESTS",
        ),
    ] = False
    code_mode_programs_per_user: Annotated[
        int,
        Source(
            "code-mode programs one user may run at once (per server process); past it `rate_limited`",
            flag="--code-mode-programs-per-user",
            env="TRULOOP_CODE_MODE_PROGRAMS_PER_USER",
            metavar="N",
        ),
    ] = Field(default=4, ge=1, le=64)
    code_mode_warm: Annotated[
        int,
        Source(
            "sandboxed interpreters kept started ahead for code-mode programs (each runs one program); 0 starts one "
            "per program",
            flag="--code-mode-warm",
            env="TRULOOP_CODE_MODE_WARM",
            metavar="N",
        ),
    ] = Field(default=2, ge=0, le=16)
    allowed_hosts: Annotated[
        tuple[str, ...],
        Source(
            "`Host` header to accept (repeatable; the variable is comma-separated), e.g. `mcp.example.com:*`: "
            "DNS-rebinding protection for a real hostname",
            flag="--allowed-host",
            env="TRULOOP_ALLOWED_HOSTS",
            metavar="HOST",
            shown="loopback names",
        ),
    ] = ()
    allowed_origins: Annotated[
        tuple[str, ...],
        Source(
            "`Origin` header to accept (repeatable; the variable is comma-separated)",
            flag="--allowed-origin",
            env="TRULOOP_ALLOWED_ORIGINS",
            metavar="ORIGIN",
            shown="loopback origins",
        ),
    ] = ()
    max_sessions_per_user: Annotated[
        int,
        Source(
            "open MCP sessions (HTTP + SSE) per user; past it 429 (see *Security model*)",
            flag="--max-sessions-per-user",
            env="TRULOOP_MAX_SESSIONS_PER_USER",
            metavar="N",
        ),
    ] = Field(default=64, ge=1, le=10_000)
    max_unanswered_requests: Annotated[
        int,
        Source(
            "requests one MCP session may have waiting for their answer to be read; past it the session is closed",
            flag="--max-unanswered-requests",
            env="TRULOOP_MAX_UNANSWERED_REQUESTS",
            metavar="N",
        ),
    ] = Field(default=64, ge=1, le=10_000)
    max_unanswered_bytes: Annotated[
        int,
        Source(
            "bytes of one user's requests waiting for their answers to be read; past it the biggest session closes",
            flag="--max-unanswered-bytes",
            env="TRULOOP_MAX_UNANSWERED_BYTES",
            metavar="BYTES",
        ),
    ] = Field(default=32 * 1024 * 1024, ge=4 * 1024 * 1024, le=1024 * 1024 * 1024)
    calls_per_minute: Annotated[
        int | None,
        Source(
            "tool calls, resource reads, prompt gets and tasks made per user and minute, shared by every replica "
            "through `--redis-url`; past it `rate_limited` with the seconds to wait; `0` turns it off",
            flag="--calls-per-minute",
            env="TRULOOP_CALLS_PER_MINUTE",
            metavar="N",
            shown="600 on HTTP with sign-in, else off",
        ),
    ] = Field(default=None, ge=0, le=1_000_000)
    max_concurrent_calls: Annotated[
        int | None,
        Source(
            "tool calls, reads and prompt gets running at once per user, shared like `--calls-per-minute`; past it "
            "`rate_limited`; `0` turns it off",
            flag="--max-concurrent-calls",
            env="TRULOOP_MAX_CONCURRENT_CALLS",
            metavar="N",
            shown="16 on HTTP with sign-in, else off",
        ),
    ] = Field(default=None, ge=0, le=100_000)
    max_unread_answer_bytes: Annotated[
        int,
        Source(
            "bytes of answers one MCP session's client has not read yet; past it the session is closed",
            flag="--max-unread-answer-bytes",
            env="TRULOOP_MAX_UNREAD_ANSWER_BYTES",
            metavar="BYTES",
        ),
    ] = Field(default=32 * 1024 * 1024, ge=1024 * 1024, le=1024 * 1024 * 1024)
    max_unread_answer_bytes_per_user: Annotated[
        int,
        Source(
            "bytes of answers one user's clients have not read yet, across their sessions; past it the biggest closes",
            flag="--max-unread-answer-bytes-per-user",
            env="TRULOOP_MAX_UNREAD_ANSWER_BYTES_PER_USER",
            metavar="BYTES",
        ),
    ] = Field(default=64 * 1024 * 1024, ge=1024 * 1024, le=4 * 1024 * 1024 * 1024)
    max_device_streams_per_user: Annotated[
        int,
        Source(
            "open device streams per user; past it 429",
            flag="--max-device-streams-per-user",
            env="TRULOOP_MAX_DEVICE_STREAMS_PER_USER",
            metavar="N",
        ),
    ] = Field(default=8, ge=1, le=1_000)
    max_connections: Annotated[
        int,
        Source(
            "open HTTP connections; past it a new one is answered 503 and closed at once; `0` is half the "
            "open-file limit, at most 4096 (see docs/http.md)",
            flag="--max-connections",
            env="TRULOOP_MAX_CONNECTIONS",
            metavar="N",
        ),
    ] = Field(default=0, ge=0, le=1_000_000)
    header_timeout: Annotated[
        float,
        Source(
            "seconds to receive an HTTP request's line and headers, from accepting the connection (or from a later "
            "request's first byte); past it the connection is closed (see docs/http.md)",
            flag="--header-timeout",
            env="TRULOOP_HEADER_TIMEOUT",
            metavar="SECONDS",
        ),
    ] = Field(default=10.0, gt=0, le=3600)
    max_line_bytes: Annotated[
        int,
        Source(
            "longest stdio line; longer ones are refused while read",
            flag="--max-line-bytes",
            env="TRULOOP_MAX_LINE_BYTES",
            metavar="BYTES",
        ),
    ] = Field(default=16 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    fast_paths: Annotated[
        bool,
        Source(
            "the speed paths of `server/speed/` (own stdio transport, lean `tools/call` and `tools/list`, lean SSE "
            "responses, one write per HTTP response, uvloop); `0` serves the plain SDK paths, with the same answers "
            "(see docs/performance.md)",
            env="TRULOOP_FAST_PATHS",
        ),
    ] = True
    page_size: Annotated[
        int,
        Source(
            "items per page of `tools/list`, `resources/list` and `prompts/list` (opaque cursors; see docs/hosts.md)",
            flag="--page-size",
            env="TRULOOP_PAGE_SIZE",
            metavar="N",
        ),
    ] = Field(default=500, ge=1, le=100_000)
    log_level: Annotated[
        LogLevel,
        Source(
            "stderr logging, in any case (`debug` or `DEBUG`; stdout is the protocol on stdio)",
            flag="--log-level",
            env="TRULOOP_LOG_LEVEL",
        ),
    ] = "WARNING"
    audit_log: Annotated[
        str | None,
        Source(
            "JSON lines of every `tool_call` and `tool_result`, masked (see *Audit log*); `-` writes them to stdout "
            "(stderr on stdio), `off` writes none",
            flag="--audit-log",
            env="TRULOOP_AUDIT_LOG",
            metavar="PATH|-|off",
            shown="`<data-dir>/audit/tool-calls.jsonl`",
        ),
    ] = None
    audit_max_bytes: Annotated[
        int,
        Source(
            "size at which the audit log is rotated (`tool-calls.jsonl.1`, `.2`, ...)",
            flag="--audit-max-bytes",
            env="TRULOOP_AUDIT_MAX_BYTES",
            metavar="BYTES",
        ),
    ] = Field(default=10 * 1024 * 1024, ge=1, le=1 << 40)
    audit_keep: Annotated[
        int,
        Source(
            "rotated audit files kept (the oldest is deleted)",
            flag="--audit-keep",
            env="TRULOOP_AUDIT_KEEP",
            metavar="N",
        ),
    ] = Field(default=5, ge=0, le=1000)
    canary_key: Annotated[
        Literal["session", "user", "request"],
        Source(
            "what keeps a caller on one version of a plugin under canary rollout (a stable hash of it picks the "
            "version; see *Canary rollout*)",
            flag="--canary-key",
            env="TRULOOP_CANARY_KEY",
        ),
    ] = "user"
    canary_scheduled_gap: Annotated[
        float,
        Source(
            "seconds a canary stage of a scheduled tool is observed before its scheduled runs may be approved (see "
            "*Canary rollout*)",
            flag="--canary-scheduled-gap",
            env="TRULOOP_CANARY_SCHEDULED_GAP",
            metavar="SECONDS",
        ),
    ] = Field(default=600.0, ge=0, le=30 * 24 * 3600)
    jwt_secret: Annotated[
        SecretStr | None, Source("HS256 secret (>= 32 bytes) for bearer tokens on HTTP", env="TRULOOP_JWT_SECRET")
    ] = Field(default=None, repr=False)
    jwt_issuer: Annotated[
        str | None, Source("when set, HS256 tokens must carry this `iss`", env="TRULOOP_JWT_ISSUER")
    ] = None
    jwt_audience: Annotated[
        tuple[str, ...],
        Source(
            "`aud` accepted besides this server's resource URLs (repeatable; the variable is comma-separated); "
            "every token must name one of them, and `truloop-mcp token` mints the first (see docs/sign-in.md)",
            flag="--jwt-audience",
            env="TRULOOP_JWT_AUDIENCE",
            metavar="AUDIENCE",
            shown="the resource URL `<public URL>/mcp`",
        ),
    ] = ()
    public_url: Annotated[
        str | None,
        Source(
            "the URL hosts reach this server at behind a proxy (e.g. `https://mcp.example.com`): the sign-in "
            "metadata, the 401's `resource_metadata` and the tokens' audience are built from it",
            flag="--public-url",
            env="TRULOOP_PUBLIC_URL",
            metavar="URL",
            shown="`http://HOST:PORT` as bound (the real port after `--port 0`)",
        ),
    ] = None
    oauth_issuer: Annotated[
        str | None,
        Source(
            "an OAuth authorization server (Keycloak, Auth0, Entra ID, ...): hosts sign in there, and its "
            "tokens are verified against its published keys, its `iss` and `aud` (see docs/sign-in.md)",
            flag="--oauth-issuer",
            env="TRULOOP_OAUTH_ISSUER",
            metavar="URL",
        ),
    ] = None
    oauth_role_claim: Annotated[
        str,
        Source(
            "the issuer's claim holding the role (a string or a list; a dotted path reads nested claims, e.g. "
            "`realm_access.roles`): `member` in it is a member, anything else a guest",
            flag="--oauth-role-claim",
            env="TRULOOP_OAUTH_ROLE_CLAIM",
            metavar="CLAIM",
        ),
    ] = Field(default="role", min_length=1, max_length=200)
    oauth_groups_claim: Annotated[
        str,
        Source(
            "the issuer's claim holding the user's groups (a dotted path reads nested claims)",
            flag="--oauth-groups-claim",
            env="TRULOOP_OAUTH_GROUPS_CLAIM",
            metavar="CLAIM",
        ),
    ] = Field(default="groups", min_length=1, max_length=200)
    state_keys: Annotated[
        tuple[SecretStr, ...],
        Source(
            "comma-separated secrets (>= 32 bytes, newest first) sealing 2026-07-28 `requestState`, so replicas "
            "and restarts agree",
            env="TRULOOP_STATE_KEYS",
            shown="per-process key",
        ),
    ] = Field(default=(), repr=False)
    google_maps_api_key: Annotated[
        SecretStr | None, Source("Google Places API (New) key for `search_places`", env="GOOGLE_MAPS_API_KEY")
    ] = Field(default=None, repr=False)
    supermemory_api_key: Annotated[
        SecretStr | None,
        Source("keeps memories in Supermemory instead of the embedded store", env="SUPERMEMORY_API_KEY"),
    ] = Field(default=None, repr=False)
    notion_token: Annotated[
        SecretStr | None, Source("Notion integration secret for `truloop-mcp notion sync`", env="NOTION_TOKEN")
    ] = Field(default=None, repr=False)
    sendbird_app_id: Annotated[
        str | None,
        Source(
            "with `SENDBIRD_API_TOKEN`: deferred calls also reach the user's app as Sendbird group channel messages",
            env="SENDBIRD_APP_ID",
        ),
    ] = None
    sendbird_api_token: Annotated[SecretStr | None, Source("Sendbird Platform API token", env="SENDBIRD_API_TOKEN")] = (
        Field(default=None, repr=False)
    )
    sendbird_sender_id: Annotated[
        str, Source("the Sendbird bot user that sends the calls", env="SENDBIRD_SENDER_ID")
    ] = Field(default="truloop-assistant", min_length=1)
    sendbird_channel_url_template: Annotated[
        str,
        Source("each user's group channel; `{user_id}` is its only placeholder", env="SENDBIRD_CHANNEL_URL_TEMPLATE"),
    ] = "truloop-agent-{user_id}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)  # only what the caller passes; load_settings() adds the environment

    @field_validator("allowed_hosts", "allowed_origins", "state_keys", "workspace_allow", "jwt_audience", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("google_maps_api_key", "supermemory_api_key", "notion_token", "sendbird_api_token", mode="before")
    @classmethod
    def _blank_key_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip() or None
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _any_case_level(cls, value: Any) -> Any:
        """`debug` is `DEBUG`; anything else is left as given, so an error quotes what was typed."""
        if isinstance(value, str) and value.strip().upper() in typing.get_args(LogLevel):
            return value.strip().upper()
        return value

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILE_NAMES:
            raise ValueError(f"unknown profile {value!r}; choose one of {', '.join(PROFILE_NAMES)}")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from toolsets.assistant.validation import parse_timezone
        from toolsets.core.errors import ToolInputError

        try:
            parse_timezone(value)
        except ToolInputError as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("locale")
    @classmethod
    def _known_locale(cls, value: str) -> str:
        from toolsets.infra.locality import locale_or_none

        tag = locale_or_none(value)
        if tag is None:
            raise ValueError("must be a BCP 47 language tag such as ko-KR, en-US or en")
        return tag

    @field_validator("jwt_secret")
    @classmethod
    def _strong_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        _check_secret("the secret", value.get_secret_value())
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return _web_url(value.strip(), "https://mcp.example.com").rstrip("/")

    @field_validator("oauth_issuer")
    @classmethod
    def _issuer_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        url = _web_url(value.strip(), "https://keycloak.example.com/realms/truloop")
        if not url.startswith("https://") and not is_loopback(_host_of(url)):
            raise ValueError("must be an https:// URL (its keys are fetched from it; plain http only on loopback)")
        return url  # as given: a token's `iss` must be exactly this

    @field_validator("state_keys")
    @classmethod
    def _strong_keys(cls, value: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        for key in value:
            _check_secret("every entry", key.get_secret_value())
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        if not value.get_secret_value().startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a URL such as redis://127.0.0.1:6379/0 (or rediss://..., unix:///run/redis.sock)")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        if not value.get_secret_value().strip().startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a URL such as postgresql://user:password@127.0.0.1:5432/truloop")
        return SecretStr(value.get_secret_value().strip())

    @field_validator("sendbird_app_id")
    @classmethod
    def _sendbird_app_id(cls, value: str | None) -> str | None:
        from bridge.sendbird import check_app_id

        return check_app_id(value) if value else None

    @field_validator("sendbird_channel_url_template")
    @classmethod
    def _sendbird_template(cls, value: str) -> str:
        from bridge.sendbird import check_channel_template

        return check_channel_template(value)

    @field_validator("data_dir", "docs_dir")
    @classmethod
    def _a_folder(cls, value: Path | None) -> Path | None:
        if value is None:
            return value
        example = "pass a folder such as ~/.local/share/truloop"
        existing = value
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{str(existing)!r} is a file, not a folder; {example}")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"{str(existing)!r} is not writable by this user; {example}")
        return value

    @field_validator("tools_dir", "workspace")
    @classmethod
    def _existing_folder(cls, value: Path | None) -> Path | None:
        if value is None or not str(value).strip():
            return None
        value = value.expanduser()
        if not value.is_dir():
            raise ValueError(f"{str(value)!r} is not an existing folder")
        return value.resolve()

    @field_validator("audit_log")
    @classmethod
    def _audit_target(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if value.strip().lower() in ("-", "off"):
            return value.strip().lower()
        if Path(value).expanduser().is_dir():
            raise ValueError(f"{value!r} is a folder; pass a file path such as /var/log/truloop/tool-calls.jsonl")
        return value

    @model_validator(mode="after")
    def _usable_gates(self) -> "Settings":
        if self.gates is not None:
            from toolsets.pipeline.gates import load_gates
            from toolsets.profiles import Extensions, assistant_toolsets, tool_arguments

            workspace = None
            if self.workspace is not None:
                from toolsets.extensions.workspace import workspace_toolset

                workspace = workspace_toolset(self.workspace)
            toolsets = assistant_toolsets(Extensions(workspace=workspace), self.exposure)
            load_gates(self.gates, tool_arguments(toolsets.values()))  # GateFileError: one line, exit 2
        return self

    @model_validator(mode="after")
    def _safe_binding(self) -> "Settings":
        if self.transport != "stdio" and not self.auth_enabled and not is_loopback(self.host):
            raise ValueError(
                f"refusing to serve {self.host} without authentication: set TRULOOP_JWT_SECRET or --oauth-issuer, "
                "or bind a loopback address such as 127.0.0.1"
            )
        return self

    @property
    def audit_target(self) -> Path | Literal["-", "off"]:
        """Where audit lines go: a file (by default `<data-dir>/audit/tool-calls.jsonl`), `-` or `off`."""
        if self.audit_log in ("-", "off"):
            return self.audit_log  # type: ignore[return-value]  # narrowed by the check above
        if self.audit_log is None:
            return self.data_dir / "audit" / "tool-calls.jsonl"
        return Path(self.audit_log).expanduser()

    @property
    def effective_plugin_isolation(self) -> Literal["inprocess", "process", "sandbox"]:
        """Where the tools folder's code runs: the sandbox whenever the model may write to the folder."""
        return "sandbox" if self.tool_authoring else self.plugin_isolation

    def plugin_sandbox(self) -> "PluginWorkerSandbox | None":
        """The sandbox plugin workers start in, where the effective isolation asks for one (not probed yet)."""
        if self.effective_plugin_isolation != "sandbox":
            return None
        from toolsets.infra.sandbox import PluginWorkerSandbox, SandboxConfig

        audit = self.audit_target
        hidden = (
            self.data_dir,
            *((self.tools_dir,) if self.tools_dir else ()),
            *((audit,) if isinstance(audit, Path) else ()),
        )
        return PluginWorkerSandbox(SandboxConfig(network=self.plugin_network, hidden=hidden))

    @property
    def code_mode_on(self) -> bool:
        """Whether members get `execute_code`: `--code-mode`, or `--exposure code` (which lists little else)."""
        return self.code_mode or self.exposure == "code"

    def code_sandbox(self) -> "PluginWorkerSandbox | None":
        """The sandbox code-mode programs run in, when code mode is on (not probed yet): the plugin sandbox's
        construction with code mode's own limits, never the network, and the server's files covered."""
        if not self.code_mode_on:
            return None
        from toolsets.extensions.codemode.engine import PROGRAM_LIMITS
        from toolsets.infra.sandbox import PluginWorkerSandbox, SandboxConfig

        audit = self.audit_target
        hidden = (
            self.data_dir,
            *((self.tools_dir,) if self.tools_dir else ()),
            *((self.workspace,) if self.workspace else ()),
            *((audit,) if isinstance(audit, Path) else ()),
        )
        return PluginWorkerSandbox(SandboxConfig(network=False, limits=PROGRAM_LIMITS, hidden=hidden))

    @property
    def resolved_docs_dir(self) -> Path:
        return self.docs_dir or self.data_dir / "docs"

    @property
    def request_limits(self) -> "Limits":
        """The per-user bounds of the admission step: where users share the server (HTTP with sign-in), 600 requests
        a minute and 16 at once unless set; where it serves the one user who started it (stdio, or HTTP on loopback
        without sign-in), none unless set."""
        from toolsets.admission.limits import Limits

        shared = self.transport != "stdio" and self.auth_enabled
        per_minute = self.calls_per_minute if self.calls_per_minute is not None else (600 if shared else 0)
        concurrent = self.max_concurrent_calls if self.max_concurrent_calls is not None else (16 if shared else 0)
        return Limits(per_minute=per_minute, concurrent=concurrent)

    @property
    def auth_enabled(self) -> bool:
        return self.jwt_secret is not None or self.oauth_issuer is not None

    @property
    def upstream_keys(self) -> "UpstreamKeys":
        from toolsets.infra.upstream.keys import UpstreamKeys

        return UpstreamKeys(
            google_maps=self.google_maps_api_key, supermemory=self.supermemory_api_key, notion=self.notion_token
        )


# -- where values come from ----------------------------------------------------------------------------------


def source_of(field: FieldInfo) -> Source:
    found = [item for item in field.metadata if isinstance(item, Source)]
    if len(found) != 1:
        raise TypeError("every setting declares exactly one Source")
    return found[0]


def sources() -> dict[str, Source]:
    """Every setting's Source, in declaration order (the order of --help and the README table)."""
    return {name: source_of(field) for name, field in Settings.model_fields.items()}


def choices_of(field: FieldInfo) -> tuple[str, ...]:
    """The values a choice setting takes (a Literal or an enum), for --help, errors and the README table."""
    annotation = field.annotation
    if typing.get_origin(annotation) is Literal:
        return tuple(str(choice) for choice in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(str(member.value) for member in annotation)
    return ()


def shown_default(field_name: str) -> str:
    """The documented default, as markdown (--help drops the marks)."""
    field = Settings.model_fields[field_name]
    source = source_of(field)
    if source.shown is not None:
        return source.shown
    default = field.default
    if default is None or default == ():
        return "unset"
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, enum.Enum):
        default = default.value
    return f"`{default:g}`" if isinstance(default, float) else f"`{default}`"


class DeclaredEnvironment(PydanticBaseSettingsSource):
    """Each setting's own variable and nothing else: no prefix and no lookup by field name (a `HOST` or
    `PORT` in a shell must not move the server). Values stay strings for the model to validate; an empty
    variable counts as unset."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        name = source_of(field).env
        return (os.environ.get(name) or None if name else None), name or field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for field_name, field in self.settings_cls.model_fields.items():
            value, _, _ = self.get_field_value(field, field_name)
            if value is not None:
                found[field_name] = value
        return found


def load_settings(flags: Mapping[str, Any]) -> Settings:
    """Flags (the ones given, by field name) over environment variables over defaults; an empty value is unset.
    Raises pydantic's ValidationError; `settings_text.explain()` turns it into one line."""
    given = {name: value for name, value in flags.items() if value not in ("", None)}
    return Settings(**{**DeclaredEnvironment(Settings)(), **given})
