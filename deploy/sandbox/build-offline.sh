#!/usr/bin/env bash
# Builds the sandbox images without any container registry:
#   frognano-sandbox:latest     from Dockerfile (always)
#   frognano-sandbox-go:test    from Dockerfile.go-example with the host's Go tree (with --go)
# When the base image debian:bookworm-slim is missing and cannot be pulled, a minbase bookworm root
# filesystem holding every package the Dockerfile lists is made with mmdebstrap (debootstrap when
# mmdebstrap cannot be had) from this machine's own apt mirror (read from its apt sources) and
# imported under that tag, so the Dockerfile's RUN step finds everything installed and needs no
# network. mmdebstrap resolves and downloads with apt, in parallel, and unpacks in one dpkg call:
# about 50 s here where debootstrap, which fetches and unpacks package by package, took 136 s.
#
# Usage: build-offline.sh [--go] [--force]
#   --go     also build frognano-sandbox-go:test (needs `go` on PATH)
#   --force  rebuild the frognano images even when they exist (the base image is kept)
# Environment:
#   FROGNANO_CACHE_DIR      where the root filesystem tarball is cached (default /var/cache/frognano)
#   FROGNANO_DEBIAN_MIRROR  the Debian mirror URI to use instead of the one in the apt sources
#   FROGNANO_OFFLINE=1      do not even try to pull the base image
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
suite=bookworm
base_image=debian:bookworm-slim
image=frognano-sandbox:latest
go_image=frognano-sandbox-go:test

log() { printf 'build-offline: [%3d s] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# classic_build runs the classic builder (it uses a locally imported base without pulling) and
# shows its output only when it fails, hiding its deprecation banner.
classic_build() {
  local out
  out=$(mktemp)
  if ! DOCKER_BUILDKIT=0 docker build "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    die "docker build $* failed"
  fi
  rm -f "$out"
}

with_go=0 force=0
for arg in "$@"; do
  case $arg in
    --go) with_go=1 ;;
    --force) force=1 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg (see --help)" ;;
  esac
done

. "$here/../docker.sh"
docker_ensure # starts this machine's engine when it is down

# The package list lives in the Dockerfile's ARG PACKAGES line: one source of truth.
packages=$(sed -n 's/^ARG PACKAGES="\(.*\)"$/\1/p' "$here/Dockerfile")
[ -n "$packages" ] || die "no ARG PACKAGES line in $here/Dockerfile"

# mirror_uri prints the URI of the first apt source serving the bookworm suite. Reading it from
# the machine keeps host names out of the repository and makes an air-gapped site's mirror work.
mirror_uri() {
  if [ -n "${FROGNANO_DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "$FROGNANO_DEBIAN_MIRROR"
    return
  fi
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: paragraphs of "Field: value" lines.
    uri=$(awk -v suite="$suite" '
      BEGIN { RS = ""; FS = "\n" }
      {
        types = ""; uris = ""; suites = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^[ \t]*#/) continue
          key = tolower(line); sub(/:.*/, "", key)
          val = line; sub(/^[^:]*:[ \t]*/, "", val)
          if (key == "types") types = val
          else if (key == "uris") uris = val
          else if (key == "suites") suites = val
          else if (key == "enabled") enabled = tolower(val)
        }
        if (enabled == "no" || types !~ /(^|[ \t])deb([ \t]|$)/) next
        n = split(suites, s, /[ \t]+/)
        for (j = 1; j <= n; j++) if (s[j] == suite) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }' "$f")
    if [ -n "$uri" ]; then printf '%s\n' "$uri"; return; fi
  done
  # One-line format: deb [options] URI SUITE COMPONENTS...
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v suite="$suite" '$1 == "deb" { sub(/\[[^]]*\][ \t]*/, ""); if ($3 == suite) { print $2; exit } }')
  if [ -n "$uri" ]; then printf '%s\n' "$uri"; return; fi
  return 1
}

# shellcheck source=../apt.sh
. "$here/../apt.sh"

# bootstrap_tool prints mmdebstrap or debootstrap, whichever is here or can be installed first.
bootstrap_tool() {
  local tool
  for tool in mmdebstrap debootstrap; do
    if command -v "$tool" >/dev/null 2>&1; then printf '%s\n' "$tool"; return; fi
  done
  [ "$(id -u)" = 0 ] || die "neither mmdebstrap nor debootstrap is here and only root can install them: apt-get install -y mmdebstrap"
  for tool in mmdebstrap debootstrap; do
    log "installing $tool"
    if apt_install "$tool" && command -v "$tool" >/dev/null 2>&1; then printf '%s\n' "$tool"; return; fi
  done
  die "could not install mmdebstrap or debootstrap from this machine's apt sources"
}

# make_base_image bootstraps (or reuses a cached) root filesystem and imports it as $base_image.
make_base_image() {
  [ "$(id -u)" = 0 ] || die "building the base root filesystem needs root; run this script as root"
  local cache key tarball mirror rootfs tool
  cache=${FROGNANO_CACHE_DIR:-/var/cache/frognano}
  key=$(printf '%s\n' "$suite" $packages | sha256sum | cut -c1-12)
  tarball="$cache/rootfs-$suite-$key.tar"
  mkdir -p "$cache"
  if [ -s "$tarball" ]; then
    log "reusing cached root filesystem $tarball"
  else
    mirror=$(mirror_uri) || die "no apt source serves '$suite'; set FROGNANO_DEBIAN_MIRROR to a Debian mirror URI"
    tool=$(bootstrap_tool)
    log "$tool minbase $suite with: $packages"
    if [ "$tool" = mmdebstrap ]; then
      # It writes the tarball itself, without apt's lists and downloaded archives (its default
      # cleanup); the hook drops the logs of the installation too.
      mmdebstrap --mode=root --variant=minbase --include="$(printf '%s' "$packages" | tr -s ' ' ',')" \
        --customize-hook='rm -f "$1"/var/log/*.log "$1"/var/log/apt/*.log' \
        "$suite" "$tarball.tmp.tar" "$mirror" >"$tarball.log" 2>&1 || {
        tail -n 30 "$tarball.log" >&2
        rm -f "$tarball.log" "$tarball.tmp.tar"
        die "mmdebstrap failed"
      }
      rm -f "$tarball.log"
      mv "$tarball.tmp.tar" "$tarball"
    else
      rootfs=$(mktemp -d /var/tmp/frognano-rootfs.XXXXXX)
      # shellcheck disable=SC2064 # expand now: the variable is local.
      trap "rm -rf '$rootfs'" EXIT
      debootstrap --variant=minbase --include="$(printf '%s' "$packages" | tr -s ' ' ',')" \
        "$suite" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
        tail -n 30 "$rootfs.log" >&2
        rm -f "$rootfs.log"
        die "debootstrap failed"
      }
      rm -f "$rootfs.log"
      # Downloaded archives and package lists only make the image bigger.
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
      tar --numeric-owner --xattrs -C "$rootfs" \
        --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$tarball.tmp" .
      mv "$tarball.tmp" "$tarball"
      rm -rf "$rootfs"
      trap - EXIT
    fi
  fi
  log "importing $tarball as $base_image"
  docker import --change 'CMD ["bash"]' "$tarball" "$base_image" >/dev/null
}

# Each image is labelled with a hash of its recipe, so an image built from an older Dockerfile
# (a machine keeps its images between runs) is rebuilt instead of silently reused. This script
# is part of the recipe: it decides what goes into the images (the base root filesystem, the Go
# tree copied into the Go image), so a fix here must replace an image an older copy built.
recipe_label=dev.frognano.recipe
recipe_of() { cat "$@" | sha256sum | cut -c1-16; }
fresh_image() { # IMAGE HASH
  [ "$(docker image inspect -f "{{index .Config.Labels \"$recipe_label\"}}" "$1" 2>/dev/null)" = "$2" ]
}
recipe=$(recipe_of "$here/Dockerfile" "$here/build-offline.sh")

if [ "$force" = 1 ] || ! fresh_image "$image" "$recipe"; then
  if ! have_image "$base_image"; then
    if [ "${FROGNANO_OFFLINE:-0}" = 1 ] || ! timeout 120 docker pull -q "$base_image" >/dev/null 2>&1; then
      log "$base_image is missing and cannot be pulled: building it from Debian packages"
      make_base_image
    fi
  fi
  log "building $image"
  classic_build --label "$recipe_label=$recipe" -t "$image" -f "$here/Dockerfile" "$here"
else
  log "$image is up to date (use --force to rebuild)"
fi

if [ "$with_go" = 1 ]; then
  command -v go >/dev/null 2>&1 || die "--go needs the host's go on PATH"
  go_recipe=$( (cat "$here/Dockerfile.go-example"; go env GOVERSION; echo "$recipe") | sha256sum | cut -c1-16)
  if [ "$force" = 1 ] || ! fresh_image "$go_image" "$go_recipe"; then
    goroot=$(go env GOROOT)
    log "building $go_image with the Go tree at $goroot ($(go env GOVERSION))"
    # The build context is streamed as a tar: the Dockerfile plus the host's Go tree renamed to
    # go/, so nothing is copied on disk. Left out: GOROOT's own test/, api/ and doc/ folders
    # (the release's tests, API lists and documents). The patterns are anchored and literal:
    # tar's default would also drop any deeper path ending in them, such as src/go/doc (which
    # go/printer, go/format and go/build import).
    gobase=$(basename "$goroot")
    tar -c -C "$here" Dockerfile.go-example \
      -C "$(dirname "$goroot")" --transform "s,^$gobase,go,S" \
      --anchored --no-wildcards \
      --exclude="$gobase/test" --exclude="$gobase/api" --exclude="$gobase/doc" \
      "$gobase" |
      classic_build --label "$recipe_label=$go_recipe" -t "$go_image" -f Dockerfile.go-example -
  else
    log "$go_image is up to date (use --force to rebuild)"
  fi
fi
log "done"
