#!/bin/sh
# Creates the cluster on first start (POSTGRES_USER with POSTGRES_PASSWORD, database POSTGRES_DB,
# scram-sha-256 for every connection), then runs the server in the foreground.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$pw"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pw"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
  if [ "$db" != postgres ]; then
    PGPASSWORD=$POSTGRES_PASSWORD createdb -h /var/run/postgresql -U "$user" "$db"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "frognano-postgres: created the cluster with database $db"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql
