# Helpers shared by setup.sh and teardown.sh for the throwaway PostgreSQL cluster (sourced).
# shellcheck source=../apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../apt.sh"

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
  apt_install postgresql || { log "error: installing postgresql failed"; exit 1; }
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

# pg_password_file holds the cluster's generated password (mode 0600, in the cluster's own
# directory, which only its owner and root can enter).
pg_password_file=$pg_dir/password

# pg_new_password writes a fresh random password to pg_password_file (hex: safe in a URL).
pg_new_password() {
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$pg_password_file")
}

# pg_initdb creates the cluster with a generated password for the postgres role and
# scram-sha-256 for every connection, local socket included: no local user gets in without the
# password. Extra arguments go to initdb.
pg_initdb() {
  pg_new_password
  as_pg_owner_prepare
  chmod 700 "$pg_dir" "$pg_dir/sock"
  pg_run "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -E UTF8 -A scram-sha-256 \
    --pwfile="$pg_password_file" "$@" >"$pg_dir/initdb.log" 2>&1
}

# pg_hba_scram makes a running cluster that an older frognano created with `trust` ask for the
# generated password: it sets the password (still over trust), rewrites pg_hba.conf and reloads,
# and returns once the server has read the new file.
pg_hba_scram() {
  local hba=$pg_dir/data/pg_hba.conf loaded
  grep -Eq '^[[:space:]]*(local|host)[^#]*[[:space:]]trust[[:space:]]*$' "$hba" || return 0
  [ -s "$pg_password_file" ] || pg_new_password
  as_pg_owner_prepare
  chmod 700 "$pg_dir" "$pg_dir/sock"
  pg_run "$pg_bin/psql" -h "$pg_dir/sock" -p "$pg_port" -U postgres -d postgres -qAt \
    -c "SET password_encryption = 'scram-sha-256'; ALTER ROLE postgres PASSWORD '$(cat "$pg_password_file")'" >/dev/null
  loaded=$(pg_conf_load_time)
  printf '%s\n' '# frognano: every connection needs the generated password (deploy/testenv/pg.sh)' \
    'local all all scram-sha-256' 'host all all 127.0.0.1/32 scram-sha-256' 'host all all ::1/128 scram-sha-256' |
    pg_run tee "$hba" >/dev/null
  pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" reload >/dev/null
  # pg_ctl reload only signals the server, which reads pg_hba.conf when it gets to it (late on a
  # busy machine): until then it still lets anyone in with trust. A new session's
  # pg_conf_load_time() is the server's last reload, and the server forks no session between
  # reading the configuration and reading pg_hba.conf, so once it has changed, trust is gone.
  local i
  for i in $(seq 1200); do
    [ "$(pg_conf_load_time)" != "$loaded" ] && return 0
    sleep 0.1
  done
  log "error: PostgreSQL did not reload $hba within 2 minutes"
  exit 1
}

# pg_conf_load_time prints when the running server last read its configuration files, as a new
# session sees it (with the generated password, which trust accepts too).
pg_conf_load_time() {
  pg_admin "$pg_bin/psql" -h "$pg_dir/sock" -p "$pg_port" -U postgres -d postgres -qAt -c 'SELECT pg_conf_load_time()'
}

# pg_url prints the connection URL of database $1 with the generated password, when there is one.
pg_url() {
  local auth=postgres
  [ -s "$pg_password_file" ] && auth="postgres:$(cat "$pg_password_file")"
  printf 'postgres://%s@127.0.0.1:%s/%s?sslmode=disable' "$auth" "$pg_port" "$1"
}

# pg_admin runs a client tool as the cluster's owner with the password in its environment.
pg_admin() {
  if [ -s "$pg_password_file" ]; then
    pg_run env PGPASSWORD="$(cat "$pg_password_file")" "$@"
  else
    pg_run "$@"
  fi
}
