#!/usr/bin/env bash
# Stops and deletes the throwaway PostgreSQL cluster that setup.sh started. Safe to run twice.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { printf 'testenv: %s\n' "$*" >&2; }
. "$here/pg.sh"

if [ -d "$pg_dir/data" ] && pg_find_bin; then
  if pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" status >/dev/null 2>&1; then
    pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w -t 60 stop >/dev/null
    log "PostgreSQL on port $pg_port stopped"
  fi
fi
rm -rf "$pg_dir"
