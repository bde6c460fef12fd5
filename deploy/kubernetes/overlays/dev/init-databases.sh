#!/usr/bin/env bash
# PostgreSQL's first start (docker-entrypoint-initdb.d): one role and one database per service, each role owning
# only its own database, with the passwords from the environment (.env). Runs once, on an empty data directory.
set -euo pipefail

for service in identity profile notifications; do
    variable="KONTO_${service^^}_DB_PASSWORD"
    password="${!variable:?$variable must be set (see .env.example)}"
    # psql variables (:'password') quote the value: a password is never spliced into SQL by hand.
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
        -v role="konto_$service" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'role', :'role') \gexec
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', :'role') \gexec
SQL
done
