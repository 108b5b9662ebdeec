#!/usr/bin/env bash
# Builds the images docker-compose.yml runs, without any container registry:
#   frognano:local           the service (the repository's Dockerfile) on BASE_IMAGE, from
#                            binaries built here; with --in-container, built inside GO_IMAGE
#                            from the modules vendored out of this machine's module cache
#   frognano-postgres:local  deploy/postgres/Dockerfile: BASE_IMAGE plus this machine's Debian
#                            PostgreSQL files (installed when missing, like deploy/testenv does)
# Run deploy/sandbox/build-offline.sh --go first: it makes BASE_IMAGE (debian:bookworm-slim) and
# GO_IMAGE (frognano-sandbox-go:test) without a registry. Docker's layer cache makes a second
# build with the same inputs quick.
# Environment: BASE_IMAGE, GO_IMAGE, FROGNANO_IMAGE (frognano:local),
# FROGNANO_POSTGRES_IMAGE (frognano-postgres:local).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
base=${BASE_IMAGE:-debian:bookworm-slim}
go_image=${GO_IMAGE:-frognano-sandbox-go:test}
image=${FROGNANO_IMAGE:-frognano:local}
pg_image=${FROGNANO_POSTGRES_IMAGE:-frognano-postgres:local}

log() { printf 'build-images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
build() { # classic builder: it uses local base images without asking a registry
  local out
  out=$(mktemp)
  if ! DOCKER_BUILDKIT=0 docker build "$@" >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    rm -f "$out"
    die "docker build $* failed"
  fi
  rm -f "$out"
}

in_container=0
case "${1:-}" in
  --in-container) in_container=1 ;;
  "") ;;
  *) die "usage: build-images.sh [--in-container]" ;;
esac
imgs=$base
[ "$in_container" = 1 ] && imgs="$base $go_image"
for img in $imgs; do
  docker image inspect "$img" >/dev/null 2>&1 || die "image $img is missing: run deploy/sandbox/build-offline.sh --go"
done
ctx=$(mktemp -d /var/tmp/frognano-images.XXXXXX)
trap 'rm -rf "$ctx"' EXIT

# 1. The service: the tracked files as they are in the work tree, and either the binaries built
# here (default: seconds, with this machine's Go build cache) or, with --in-container, vendor/
# for a build inside GO_IMAGE that downloads nothing (minutes: it compiles every dependency).
mkdir -p "$ctx/src"
(cd "$root" && git ls-files -z | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done) |
  tar -C "$root" --null -T - -cf - | tar -C "$ctx/src" -xf -
version=$(cd "$root" && git describe --always --dirty 2>/dev/null || echo dev)
if [ "$in_container" = 1 ]; then
  (cd "$root" && GOFLAGS=-mod=mod GOPROXY=off go mod vendor -o "$ctx/src/vendor") ||
    die "go mod vendor failed: the module cache lacks a module (go mod download on a machine with the proxy)"
  log "building $image ($version) with Go from $go_image on $base"
else
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=$version" -o "$ctx/src/prebuilt/frognano" ./cmd/frognano &&
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/src/prebuilt/frognano-executor" ./cmd/frognano-executor) ||
    die "building the binaries failed"
  go_image=$base # the build stage only copies them
  log "building $image ($version) from binaries built here, on $base"
fi
build --build-arg GO_IMAGE="$go_image" --build-arg BASE_IMAGE="$base" --build-arg VERSION="$version" \
  -t "$image" "$ctx/src"

# 2. PostgreSQL: the base plus this machine's postgresql files and the libraries the base lacks.
# shellcheck source=../testenv/pg.sh
. "$root/deploy/testenv/pg.sh"
pg_find_bin install
ver_dir=$(dirname "$pg_bin")
ver=$(basename "$ver_dir")
mkdir -p "$ctx/pg/root"
cp "$root/deploy/postgres/Dockerfile" "$root/deploy/postgres/entrypoint.sh" "$ctx/pg/"
tar -C / -cf - "${ver_dir#/}" "usr/share/postgresql/$ver" | tar -C "$ctx/pg/root" -xf -
libs=$(for b in postgres initdb pg_ctl psql pg_isready createdb; do ldd "$pg_bin/$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u)
# shellcheck disable=SC2086
missing=$(docker run --rm --network none --entrypoint /bin/sh "$base" -c 'for l; do [ -e "$l" ] || echo "$l"; done' sh $libs)
# Into the real folder (Debian's /lib is a link to usr/lib: a copied lib/ folder would replace it).
for l in $missing; do
  d=$(readlink -f "$(dirname "$l")")
  mkdir -p "$ctx/pg/root$d"
  cp -L "$l" "$ctx/pg/root$d/"
done
if ! docker run --rm --network none --entrypoint /bin/sh "$base" -c '[ -e /usr/share/zoneinfo/UTC ]'; then
  tar -C / -cf - usr/share/zoneinfo | tar -C "$ctx/pg/root" -xf -
fi
log "building $pg_image from $base with PostgreSQL $ver"
build --build-arg BASE_IMAGE="$base" -t "$pg_image" "$ctx/pg"
log "done: $image, $pg_image"
