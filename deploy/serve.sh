#!/usr/bin/env bash
# `make serve`: runs frognano on this machine with everything it needs, from a fresh checkout.
#   1. reads ./.env when present (the GitHub App settings; see docs/configuration.md);
#   2. builds bin/frognano and bin/frognano-executor;
#   3. builds the sandbox image when missing (offline when no registry answers);
#   4. when DATABASE_URL is not set, starts (or reuses) a local PostgreSQL cluster that keeps its
#      data in FROGNANO_DATA_DIR/postgres (FROGNANO_DATA_DIR defaults to /var/lib/frognano as
#      root, else ~/.local/share/frognano) on 127.0.0.1:FROGNANO_PG_PORT (default 5433), with a
#      database named frognano. Every connection, the Unix socket's included, needs the password
#      generated at the cluster's creation and kept in FROGNANO_DATA_DIR/postgres/password (mode
#      0600; the folder is 0700): no other local user can connect. A cluster an older version
#      made with `trust` is switched over at the next start;
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

. "$root/deploy/docker.sh"
docker_ensure # starts this machine's engine when it is down
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
      pg_initdb || { cat "$pg_dir/initdb.log" >&2; die "initdb failed"; }
    elif ! [ -s "$pg_password_file" ] && ! grep -Eq '[[:space:]]trust[[:space:]]*$' "$pg_dir/data/pg_hba.conf"; then
      die "$pg_password_file is missing: set the postgres role's password again (ALTER ROLE) and write it there, mode 0600"
    fi
    pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
      -o "-p $pg_port -k $pg_dir/sock -c listen_addresses=127.0.0.1" start >/dev/null ||
      { tail -n 20 "$pg_dir/server.log" >&2; die "starting PostgreSQL failed"; }
    stop="$pg_bin/pg_ctl -D $pg_dir/data stop"
    [ "$(id -u)" = 0 ] && stop="runuser -u postgres -- $stop" # the server's owner, as pg_run starts it
    log "PostgreSQL running on 127.0.0.1:$pg_port (data in $pg_dir; stop: $stop)"
  fi
  pg_find_bin
  pg_hba_scram # a cluster made with trust by an older frognano asks for the password from now on
  pg_admin "$pg_bin/psql" -h "$pg_dir/sock" -p "$pg_port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='frognano'" | grep -q 1 ||
    pg_admin "$pg_bin/createdb" -h "$pg_dir/sock" -p "$pg_port" -U postgres frognano
  DATABASE_URL=$(pg_url frognano)
  export DATABASE_URL
fi

log "starting frognano serve"
exec "$root/bin/frognano" serve "$@"
