# Sourced by the container scripts (build-image.sh, compose-up.sh, compose-down.sh): `engine` runs the
# container engine, podman by default (CONTAINER_ENGINE=docker for Docker), and `compose` its compose tool.
#
# podman reads deploy/podman/containers.conf unless CONTAINERS_CONF names another file: the runc runtime,
# the cgroupfs manager and no default ulimits, which hosts like the CI machines need (the Debian packages
# podman, runc and podman-compose; docs/deployment.md, *Containers*).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE="${CONTAINER_ENGINE:-podman}"
if [ "$ENGINE" = podman ]; then
  export CONTAINERS_CONF="${CONTAINERS_CONF:-$ROOT/deploy/podman/containers.conf}"
  engine() { podman "$@"; }
  compose() { podman-compose -p truloop "$@"; }
else
  engine() { "$ENGINE" "$@"; }
  compose() { "$ENGINE" compose -p truloop "$@"; }
fi
IMAGE="${TRULOOP_IMAGE:-localhost/truloop-mcp:latest}"
