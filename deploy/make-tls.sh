#!/usr/bin/env bash
# Makes the certificates docker-compose.yml uses for TLS between the services and to PostgreSQL: a CA of the
# deployment's own, and for each name a key and a certificate the CA signed, naming the compose service (what callers
# verify: sslmode=verify-full, KONTO_WIRE_TLS_CA), localhost and 127.0.0.1 (the images' own health checks).
# Usage: deploy/make-tls.sh [DIR [NAME ...]]   (DIR: deploy/tls; NAMEs: postgres identity profile notifications)
# Existing files are kept: delete DIR to make new ones. The CA's key stays in DIR; keep it offline once done.
set -euo pipefail
dir=${1:-$(dirname "$0")/tls}
shift $(( $# > 0 ? 1 : 0 ))
names=("$@")
((${#names[@]})) || names=(postgres identity profile notifications)
command -v openssl >/dev/null || { echo "make-tls: openssl is needed (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
umask 077
if [[ ! -f $dir/ca.crt ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 -subj "/CN=Konto deployment CA" \
        -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi
for name in "${names[@]}"; do
    [[ -f $dir/$name.crt && -f $dir/$name.key ]] && continue
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
        -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
    printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$name" > "$dir/$name.ext"
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
        -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
    rm -f "$dir/$name.csr" "$dir/$name.ext"
done
# Certificates are public. The services run as uid/gid 10001 in their images and read their keys from the mount: the
# keys are readable by that group (by everyone where this user cannot give files to it), the CA's key by no one else.
chmod 0644 "$dir"/*.crt
chmod 0755 "$dir"
for name in "${names[@]}"; do
    if chgrp 10001 "$dir/$name.key" 2>/dev/null; then chmod 0640 "$dir/$name.key"; else chmod 0644 "$dir/$name.key"; fi
done
chmod 0600 "$dir/ca.key"
echo "make-tls: certificates for ${names[*]} in $dir (CA: $dir/ca.crt)"
