#!/usr/bin/env bash
# `make serve`: runs frognano on this machine with everything it needs, from a fresh checkout.
#   1. reads ./.env when present (the GitHub App settings; see README.md, "Configuration");
#   2. builds bin/frognano and bin/frognano-executor;
#   3. builds the sandbox image when missing (offline when no registry answers);
#   4. when DATABASE_URL is not set, starts (or reuses) a local PostgreSQL cluster that keeps its
#      data in FROGNANO_DATA_DIR (default /var/lib/frognano as root, else ~/.local/share/frognano)
#      on 127.0.0.1:FROGNANO_PG_PORT (default 5433), with a database named frognano;
#   5. runs `frognano serve` (which applies migrations at start).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
log() { printf 'serve: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -f .env ]; then
  log "reading .env"
  set -a
  # shellcheck disable=SC1091
  . ./.env
  set +a
fi

docker version >/dev/null 2>&1 || die "no Docker engine answers: start it (systemctl start docker) or set DOCKER_HOST"
make --no-print-directory build >/dev/null
"$root/deploy/sandbox/build-offline.sh"

if [ -z "${DATABASE_URL:-}" ]; then
  if [ "$(id -u)" = 0 ]; then data=${FROGNANO_DATA_DIR:-/var/lib/frognano}; else data=${FROGNANO_DATA_DIR:-$HOME/.local/share/frognano}; fi
  FROGNANO_TEST_PG_PORT=${FROGNANO_PG_PORT:-5433}
  FROGNANO_TESTENV_DIR=$data/postgres
  export FROGNANO_TEST_PG_PORT FROGNANO_TESTENV_DIR
  . "$root/deploy/testenv/pg.sh"
  if ! pg_ours_running; then
    pg_port_busy && die "port $pg_port is taken; set FROGNANO_PG_PORT or DATABASE_URL"
    pg_find_bin install
    mkdir -p "$pg_dir/sock"
    as_pg_owner_prepare
    if [ ! -f "$pg_dir/data/PG_VERSION" ]; then
      log "creating a PostgreSQL cluster in $pg_dir"
      pg_run "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres -E UTF8 >"$pg_dir/initdb.log" 2>&1 ||
        { cat "$pg_dir/initdb.log" >&2; die "initdb failed"; }
    fi
    pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
      -o "-p $pg_port -k $pg_dir/sock -c listen_addresses=127.0.0.1" start >/dev/null ||
      { tail -n 20 "$pg_dir/server.log" >&2; die "starting PostgreSQL failed"; }
    log "PostgreSQL running on 127.0.0.1:$pg_port (data in $pg_dir; stop: $pg_bin/pg_ctl -D $pg_dir/data stop)"
  fi
  pg_run "$pg_bin/psql" -h "$pg_dir/sock" -p "$pg_port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='frognano'" | grep -q 1 ||
    pg_run "$pg_bin/createdb" -h "$pg_dir/sock" -p "$pg_port" -U postgres frognano
  export DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/frognano?sslmode=disable"
fi

log "starting frognano serve"
exec "$root/bin/frognano" serve "$@"
