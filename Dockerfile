# The frognano service image: the frognano binary and the static tool executor on Debian, with
# git (the service clones and pushes on the host side of the trust boundary). It creates sandboxes
# through a Docker engine (DOCKER_HOST; see docs/operations.md, "Containers", for which engine); the
# sandboxes themselves never see that engine.
#
# Both base images are build arguments whose defaults are the public images:
#   docker build -t frognano:latest .
# Without a registry, point them at local images (deploy/compose/build-images.sh does):
#   GO_IMAGE   any image with Go 1.26 on PATH (e.g. frognano-sandbox-go:test, which
#              deploy/sandbox/build-offline.sh --go makes from the host's Go tree)
#   BASE_IMAGE a Debian bookworm root file system (build-offline.sh imports one as
#              debian:bookworm-slim); git and ca-certificates are installed only when missing
# With a vendor/ folder in the build context (`go mod vendor` on a machine that has the
# modules), the build downloads nothing. With prebuilt/frognano and prebuilt/frognano-executor
# in the context (static, CGO_ENABLED=0), the build stage only copies them: GO_IMAGE may then be
# any image with a shell, which is how the tests build the image in seconds.
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
USER root
WORKDIR /src
COPY . .
ARG VERSION=dev
RUN set -eu; \
    mkdir -p /out; \
    if [ -x prebuilt/frognano ] && [ -x prebuilt/frognano-executor ]; then \
      cp prebuilt/frognano prebuilt/frognano-executor /out/; \
      exit 0; \
    fi; \
    export CGO_ENABLED=0 GOCACHE=/tmp/go-build GOPATH=/tmp/go GOTOOLCHAIN=local; \
    if [ -d vendor ]; then mod=-mod=vendor; else mod=-mod=readonly; go mod download; fi; \
    go build $mod -trimpath -ldflags="-s -w -X main.version=$VERSION" -o /out/frognano ./cmd/frognano; \
    go build $mod -trimpath -ldflags='-s -w' -o /out/frognano-executor ./cmd/frognano-executor

FROM ${BASE_IMAGE} AS runtime
RUN set -eu; \
    missing=""; \
    for p in git ca-certificates; do \
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"; \
    done; \
    if [ -n "$missing" ]; then \
      apt-get update; \
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    groupadd --system --gid 10001 frognano; \
    useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/frognano --create-home --shell /usr/sbin/nologin frognano; \
    mkdir -p /var/lib/frognano/work /run/frognano; \
    chown -R 10001:10001 /var/lib/frognano /run/frognano
COPY --from=build /out/frognano /out/frognano-executor /usr/local/bin/
# /run/frognano holds the socket of `frognano docker-proxy` (docker-compose.yml shares it as a
# volume, which takes this folder's owner).
# Clones live in the work folder (a volume in docker-compose.yml); the sandboxes get their files
# through the engine's API, so the engine needs no path of this container.
ENV FROGNANO_WORK_DIR=/var/lib/frognano/work \
    FROGNANO_EXECUTOR=/usr/local/bin/frognano-executor
USER 10001:10001
WORKDIR /var/lib/frognano
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/frognano"]
CMD ["serve"]
