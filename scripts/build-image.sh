#!/usr/bin/env bash
# Build the truloop-mcp image from the Dockerfile.
#
#   scripts/build-image.sh                         on localhost/debian-base:bookworm (scripts/make-base-image.sh
#                                                  makes it when missing), pip configured as on this host
#   BASE=python:3.12-slim scripts/build-image.sh   on the official image, where a registry is reachable
#
# pip inside the build reaches the package index the way it does on this host: the pip configuration files
# that exist here, and the CA bundle and local folders they name, are mounted read-only into the build.
set -euo pipefail
. "$(dirname "$0")/container-engine.sh"

BASE="${BASE:-localhost/debian-base:bookworm}"
if [ "$BASE" = localhost/debian-base:bookworm ] && ! engine image inspect "$BASE" >/dev/null 2>&1; then
  "$ROOT/scripts/make-base-image.sh"
fi

options=()
[ "$ENGINE" = podman ] && options+=(--format docker)  # the OCI format has no HEALTHCHECK
while IFS= read -r path; do
  options+=(--volume "$path:$path:ro")  # podman only: docker build has no volumes
done < <([ "$ENGINE" = podman ] && python3 - <<'PY'
import os, subprocess, sys
debug = subprocess.run([sys.executable, "-m", "pip", "config", "debug"], capture_output=True, text=True).stdout
values = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
paths = [line.split(",")[0].strip() for line in debug.splitlines() if line.strip().endswith("exists: True")]
for line in values.splitlines():  # key='value ...': the files and folders the configuration names
    for word in line.partition("=")[2].strip("'\"").split():
        word = word.removeprefix("file://")
        if word.startswith("/"):
            # a local index's pages link to files beside the `simple` folder
            paths.append(word.rstrip("/").removesuffix("/simple"))
for path in dict.fromkeys(paths):
    if os.path.exists(path):
        print(path)
PY
)

echo "image: $IMAGE on $BASE"
engine build --network host "${options[@]}" --build-arg "BASE=$BASE" -t "$IMAGE" "$ROOT"
engine image inspect "$IMAGE" --format 'image: {{.Id}} {{.Size}} bytes, user {{.Config.User}}'
