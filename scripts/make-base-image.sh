#!/usr/bin/env bash
# Make the base image localhost/debian-base:bookworm from Debian's own packages (debootstrap), for machines
# that reach no container registry, only Debian's mirror. Needs root and the packages debootstrap and podman.
#
#   scripts/make-base-image.sh            the mirror apt already uses
#   MIRROR=http://deb.debian.org/debian scripts/make-base-image.sh
set -euo pipefail
. "$(dirname "$0")/container-engine.sh"

BASE_IMAGE="${BASE_IMAGE:-localhost/debian-base:bookworm}"
SUITE="${SUITE:-bookworm}"
if [ -z "${MIRROR:-}" ]; then
  # the first Debian mirror in apt's sources (deb822 or one-line format)
  MIRROR="$(grep -rhoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ \
    2>/dev/null | grep -oE 'https?://[^ ]+' | head -1 || true)"
  MIRROR="${MIRROR:-http://deb.debian.org/debian}"
fi
rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
echo "base: debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates "$SUITE" "$rootfs" "$MIRROR" >/dev/null
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | engine import - "$BASE_IMAGE" >/dev/null
echo "base: $BASE_IMAGE"
