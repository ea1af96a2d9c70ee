# truloop-mcp over streamable HTTP (docs/deployment.md, *Containers*).
#
#   docker build -t truloop-mcp .                         (python:3.12-slim)
#   scripts/build-image.sh                                (podman, on a Debian base made with debootstrap)
#
# BASE is any Debian-like image with python3 and its venv module: the official slim image by default, or the
# local base scripts/make-base-image.sh makes where no registry but Debian's is reachable.
ARG BASE=python:3.12-slim

FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/truloop
COPY pyproject.toml README.md LICENSE /src/
COPY server /src/server
COPY bridge /src/bridge
COPY toolsets /src/toolsets
# A regular (not editable) install: pip compiles the bytecode, so no start compiles anything.
RUN /opt/truloop/bin/pip install --compile '/src[fast]'

FROM ${BASE}
RUN useradd --system --create-home --home-dir /var/lib/truloop --shell /usr/sbin/nologin truloop
COPY --from=build /opt/truloop /opt/truloop
COPY deploy/entrypoint.sh /usr/local/bin/truloop-entrypoint
ENV PATH=/opt/truloop/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TRULOOP_DATA_DIR=/var/lib/truloop/data
USER truloop
WORKDIR /var/lib/truloop
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python3", "-c", "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
ENTRYPOINT ["truloop-entrypoint"]
# TRULOOP_JWT_SECRET comes from the environment (the entrypoint refuses to serve without it); so do
# TRULOOP_STATE_KEYS, REDIS_URL and DATABASE_URL for several replicas (compose.yaml).
CMD ["--transport", "http", "--host", "0.0.0.0", "--port", "8000"]
