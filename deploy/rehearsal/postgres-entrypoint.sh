#!/usr/bin/env bash
# What the official postgres image's entrypoint does, as far as docker-compose.yml relies on it: on an empty data
# directory, initdb with POSTGRES_PASSWORD for the superuser, run /docker-entrypoint-initdb.d/*.sh against a
# server listening only on its socket, then serve on every interface with password authentication. Like the official
# one, it runs any other command given (docker-compose.yml's TLS set-up, which then calls it as docker-entrypoint.sh),
# and passes what follows `postgres` on to the server (-c ssl=on …).
set -euo pipefail
if [[ $# -gt 0 && $1 != postgres && $1 != -* ]]; then
    exec "$@"
fi
[[ ${1:-} == postgres ]] && shift
export POSTGRES_USER=${POSTGRES_USER:-postgres}
if [[ $(id -u) -eq 0 ]]; then
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi
if [[ ! -s $PGDATA/PG_VERSION ]]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    pg_ctl --wait --silent -o "-c listen_addresses=''" start
    for script in /docker-entrypoint-initdb.d/*.sh; do
        [[ -e $script ]] || continue
        echo "postgres-entrypoint: running $script"
        bash "$script"
    done
    pg_ctl --wait --silent -m fast stop
fi
exec postgres -c listen_addresses='*' "$@"
