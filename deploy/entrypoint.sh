#!/bin/sh
# The container's entrypoint. Serving HTTP needs TRULOOP_JWT_SECRET: without it the server would answer every
# caller as one unauthenticated user, which no deployment behind a load balancer wants. Anything else
# (`--version`, `db migrate`, `users import`, `token`, ...) runs as given.
set -eu
previous=""
for arg in "$@"; do
  case "$previous $arg" in
    "--transport http" | "--transport sse" | *" --transport=http" | *" --transport=sse")
      if [ -z "${TRULOOP_JWT_SECRET:-}" ]; then
        echo "truloop-mcp: set TRULOOP_JWT_SECRET (the HS256 secret of the bearer tokens) to serve HTTP" >&2
        exit 64
      fi
      ;;
  esac
  previous="$arg"
done
exec truloop-mcp "$@"
