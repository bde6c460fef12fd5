#!/usr/bin/env bash
# Writes the files the dev overlay's Secrets are generated from, into overlays/dev/secrets/ (or DIR): each service's
# fresh keys from `konto keys` and its database URL, a file per service, named as the settings are in a secrets
# directory (konto-identity-wire-key=...); random database passwords; and the CA and certificates of
# deploy/make-tls.sh, named for the cluster's Services. Existing files are kept: delete DIR to make new ones.
# Usage: deploy/kubernetes/make-secrets.sh [DIR]   (needs `konto` on PATH, or KONTO=/path/to/konto; and openssl)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/overlays/dev/secrets}
konto=${KONTO:-konto}
command -v "$konto" >/dev/null || { echo "make-secrets: konto is needed (swift build --product konto; KONTO=path)" >&2; exit 1; }
mkdir -p "$dir"
umask 077
if [[ ! -f $dir/identity.env ]]; then
    keys=$("$konto" keys)
    value() { grep "^$1=" <<<"$keys" | cut -d= -f2-; }
    # A setting as its file in a secrets directory is named: KONTO_IDENTITY_WIRE_KEY is konto-identity-wire-key.
    line() { printf '%s=%s\n' "$(tr 'A-Z_' 'a-z-' <<<"$1")" "$2"; }
    password() { openssl rand -hex 32; }
    identity_db=$(password) profile_db=$(password) notifications_db=$(password)
    url() { printf 'postgres://konto_%s:%s@postgres:5432/konto_%s?sslmode=verify-full&sslrootcert=/etc/konto/tls/ca.crt' "$1" "$2" "$1"; }
    {
        for name in KONTO_IDENTITY_WIRE_KEY KONTO_IDENTITY_WIRE_VERIFIERS KONTO_IDENTITY_DATA_KEY KONTO_MAIL_SEAL_KEY; do line "$name" "$(value "$name")"; done
        line KONTO_IDENTITY_DATABASE_URL "$(url identity "$identity_db")"
    } > "$dir/identity.env"
    {
        for name in KONTO_PROFILE_WIRE_KEY KONTO_PROFILE_WIRE_VERIFIERS; do line "$name" "$(value "$name")"; done
        line KONTO_PROFILE_DATABASE_URL "$(url profile "$profile_db")"
    } > "$dir/profile.env"
    {
        for name in KONTO_NOTIFICATIONS_WIRE_VERIFIERS KONTO_MAIL_SEAL_KEY; do line "$name" "$(value "$name")"; done
        line KONTO_NOTIFICATIONS_DATABASE_URL "$(url notifications "$notifications_db")"
    } > "$dir/notifications.env"
    line KONTO_GATEWAY_WIRE_KEY "$(value KONTO_GATEWAY_WIRE_KEY)" > "$dir/gateway.env"
    # PostgreSQL's own settings keep their names (the image reads them from its environment).
    printf 'POSTGRES_PASSWORD=%s\nKONTO_IDENTITY_DB_PASSWORD=%s\nKONTO_PROFILE_DB_PASSWORD=%s\nKONTO_NOTIFICATIONS_DB_PASSWORD=%s\n' \
        "$(password)" "$identity_db" "$profile_db" "$notifications_db" > "$dir/postgres.env"
fi
"$here/../make-tls.sh" "$dir/tls" postgres identity profile notifications >/dev/null
echo "make-secrets: the dev overlay's secrets in $dir"
