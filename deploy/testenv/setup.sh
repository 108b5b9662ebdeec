#!/usr/bin/env bash
# Prepares this machine for the test suite and prints the environment the tests need:
#   1. checks that a Docker engine answers, starting the local one when it is down (and installs docker-compose and chromium when missing,
#      in the background while the images build);
#   2. builds frognano-sandbox:latest and frognano-sandbox-go:test when missing (offline path);
#   3. starts (or reuses) a throwaway PostgreSQL cluster on 127.0.0.1 and prints
#      TEST_DATABASE_URL for it.
# Usage:  eval "$(deploy/testenv/setup.sh)"    or    . deploy/testenv/setup.sh
# then    deploy/testenv/teardown.sh           stops and deletes the cluster.
# Printed variables: TEST_DATABASE_URL, and FROGNANO_TESTENV_STARTED=1 when this invocation
# started the cluster (0 when it reused one), so a caller tears down only what it started.
# Environment:
#   TEST_DATABASE_URL      when already set, no cluster is started and the URL is kept
#   FROGNANO_TEST_PG_PORT  port of the throwaway cluster (default 55432)
#   FROGNANO_TESTENV_DIR   its directory (default /tmp/frognano-testenv-PORT)
#   FROGNANO_SKIP_IMAGES=1 do not check or build the sandbox images

# Sourced: run as a child (so `set -e` and friends do not leak into the caller's shell) and
# export what it prints.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  __frognano_env=$(bash "${BASH_SOURCE[0]}" "$@") || return $?
  eval "$__frognano_env"
  unset __frognano_env
  return 0
fi

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../apt.sh"
. "$here/pg.sh"

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# 1. Docker: started here when this machine has its own engine and it is down (deploy/docker.sh).
. "$here/../docker.sh"
docker_ensure

# Debian packages the tests use: docker-compose runs the compose test (deploy/compose); chromium
# the run pages' browser tests (web, web/auth through web/webtest, driven by chromedp). They are
# installed when missing, in the background while the images build (their download is most of a
# minute), and waited for before the tests start. mmdebstrap, which builds the images' base root
# filesystem when there is no registry, is installed first when that base is missing: apt runs
# one install at a time.
host_pkgs=""
command -v docker-compose >/dev/null 2>&1 || host_pkgs="$host_pkgs docker-compose"
command -v chromium >/dev/null 2>&1 || host_pkgs="$host_pkgs chromium"
if [ -n "$host_pkgs" ] && [ "$(id -u)" != 0 ]; then
  die "missing:$host_pkgs; install them (apt-get install -y$host_pkgs) or run this as root"
fi
if [ "${FROGNANO_SKIP_IMAGES:-0}" != 1 ] && [ -n "$host_pkgs" ] && [ "$(id -u)" = 0 ] &&
  ! command -v mmdebstrap >/dev/null 2>&1 && ! command -v debootstrap >/dev/null 2>&1 &&
  ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
  log "installing mmdebstrap"
  apt_install mmdebstrap || log "could not install mmdebstrap; build-offline.sh will try debootstrap"
fi
apt_pid="" apt_log=""
if [ -n "$host_pkgs" ]; then
  log "installing$host_pkgs (in the background)"
  apt_log=$(mktemp)
  # shellcheck disable=SC2086 # a list of package names
  apt_install $host_pkgs >"$apt_log" 2>&1 &
  apt_pid=$!
fi
wait_host_pkgs() {
  [ -n "$apt_pid" ] || return 0
  if ! wait "$apt_pid"; then
    cat "$apt_log" >&2
    rm -f "$apt_log"
    die "installing$host_pkgs failed"
  fi
  rm -f "$apt_log"
  apt_pid=""
  log "installed$host_pkgs"
}

# 2. Images.
if [ "${FROGNANO_SKIP_IMAGES:-0}" != 1 ]; then
  # build-offline.sh rebuilds an image only when it is missing or its recipe changed (a label
  # holds the recipe's hash), so this is quick when the images are current.
  start=$SECONDS
  "$root/deploy/sandbox/build-offline.sh" --go
  log "sandbox images ready in $((SECONDS - start)) s"
fi
wait_host_pkgs

# 3. PostgreSQL, last, so that a failure above leaves no cluster running.
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  log "TEST_DATABASE_URL is set: using it, starting no cluster"
  printf 'export TEST_DATABASE_URL=%q\nexport FROGNANO_TESTENV_STARTED=0\n' "$TEST_DATABASE_URL"
  exit 0
fi

started=0
if pg_ours_running; then
  log "reusing the cluster running in $pg_dir on port $pg_port"
else
  if pg_port_busy; then
    die "port $pg_port is taken by a server that is not ours ($pg_dir); set FROGNANO_TEST_PG_PORT to a free port"
  fi
  pg_find_bin install
  start=$SECONDS
  rm -rf "$pg_dir"
  mkdir -p "$pg_dir/sock"
  # A throwaway cluster on the loopback only, durability off for speed; a generated password
  # (in $pg_dir, mode 0600) for every connection, as deploy/serve.sh does.
  pg_initdb --no-sync || { cat "$pg_dir/initdb.log" >&2; die "initdb failed"; }
  pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
    -o "-p $pg_port -k $pg_dir/sock -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null ||
    { tail -n 20 "$pg_dir/server.log" >&2; die "starting PostgreSQL failed"; }
  started=1
  log "PostgreSQL started in $pg_dir on port $pg_port in $((SECONDS - start)) s"
fi
url=$(pg_url postgres)
printf 'export TEST_DATABASE_URL=%q\nexport FROGNANO_TESTENV_STARTED=%s\n' "$url" "$started"
