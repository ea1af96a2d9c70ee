#!/usr/bin/env bash
# Start compose.yaml (PostgreSQL, Redis, two truloop-mcp replicas, HAProxy) and wait until the balancer
# answers /healthz on http://127.0.0.1:${TRULOOP_PORT:-8080}.
#
#   TRULOOP_JWT_SECRET=... TRULOOP_STATE_KEYS=... POSTGRES_PASSWORD=... scripts/compose-up.sh
#
# The truloop-mcp image is built first when missing (scripts/build-image.sh). LOCAL_SERVICES=1 runs
# PostgreSQL, Redis and HAProxy from images built here out of Debian's packages (deploy/debian-services/)
# instead of the official images, for machines that reach no registry but Debian's mirror.
set -euo pipefail
. "$(dirname "$0")/container-engine.sh"
cd "$ROOT"

: "${TRULOOP_JWT_SECRET:?set TRULOOP_JWT_SECRET}" "${TRULOOP_STATE_KEYS:?set TRULOOP_STATE_KEYS}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
export TRULOOP_IMAGE="$IMAGE"
engine image inspect "$IMAGE" >/dev/null 2>&1 || "$ROOT/scripts/build-image.sh"

if [ "${LOCAL_SERVICES:-0}" = 1 ]; then
  BASE="${BASE:-localhost/debian-base:bookworm}"
  engine image inspect "$BASE" >/dev/null 2>&1 || "$ROOT/scripts/make-base-image.sh"
  for service in postgres redis haproxy; do
    image="localhost/truloop-$service:debian"
    if ! engine image inspect "$image" >/dev/null 2>&1; then
      echo "compose: building $image from Debian's packages"
      engine build --network host --build-arg "BASE=$BASE" --target "$service" -t "$image" \
        -f deploy/debian-services/Dockerfile . >/dev/null
    fi
  done
  export POSTGRES_IMAGE=localhost/truloop-postgres:debian REDIS_IMAGE=localhost/truloop-redis:debian
  export HAPROXY_IMAGE=localhost/truloop-haproxy:debian
fi

compose up -d
port="${TRULOOP_PORT:-8080}"
for _ in $(seq 1 120); do
  if python3 -c "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:$port/healthz', timeout=2).status != 200)" \
    2>/dev/null; then
    echo "compose: serving on http://127.0.0.1:$port/mcp"
    exit 0
  fi
  sleep 1
done
echo "compose: the balancer did not answer /healthz on port $port within 120 s" >&2
compose logs --tail 30 >&2 || true
exit 1
