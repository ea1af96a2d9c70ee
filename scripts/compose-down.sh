#!/usr/bin/env bash
# Stop and remove what scripts/compose-up.sh started (add -v to drop the PostgreSQL volume too).
set -euo pipefail
. "$(dirname "$0")/container-engine.sh"
cd "$ROOT"
# compose.yaml insists on these to start; stopping needs none of them
export TRULOOP_JWT_SECRET="${TRULOOP_JWT_SECRET:-unused}" TRULOOP_STATE_KEYS="${TRULOOP_STATE_KEYS:-unused}"
export POSTGRES_PASSWORD="${POSTGRES_PASSWORD:-unused}"
compose down "$@"
# podman-compose 1.0 leaves the project's network behind
if [ "$ENGINE" = podman ]; then engine network rm truloop_default >/dev/null 2>&1 || true; fi
