# Helpers shared by setup.sh and teardown.sh for the throwaway PostgreSQL cluster (sourced).
pg_port=${FROGNANO_TEST_PG_PORT:-55432}
pg_dir=${FROGNANO_TESTENV_DIR:-/tmp/frognano-testenv-$pg_port}
pg_bin=

# pg_find_bin sets pg_bin to the newest PostgreSQL server binaries; with "install" it installs
# them (Debian's postgresql package) when missing.
pg_find_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then pg_bin=$d; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    pg_bin=$(dirname "$(command -v pg_ctl)")
    return 0
  fi
  [ "${1:-}" = install ] || return 1
  [ "$(id -u)" = 0 ] || { log "error: PostgreSQL is missing: apt-get install -y postgresql"; exit 1; }
  log "installing PostgreSQL"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq postgresql >/dev/null
  pg_find_bin
}

# pg_run runs a PostgreSQL tool as the cluster's owner: initdb and the server refuse to run as root.
pg_run() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

as_pg_owner_prepare() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { log "error: no 'postgres' user to own the cluster"; exit 1; }
    chown -R postgres: "$pg_dir"
  fi
}

# pg_port_busy reports whether something listens on the cluster's port.
pg_port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$pg_port") 2>/dev/null
}

# pg_ours_running reports whether our cluster directory has a live server on the port.
pg_ours_running() {
  [ -f "$pg_dir/data/postmaster.pid" ] || return 1
  pg_find_bin || return 1
  pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" status >/dev/null 2>&1 && pg_port_busy
}
