#!/usr/bin/env bash
# The test command (README, "Run the tests"): installs what a fresh Debian machine lacks (PostgreSQL's server
# programs, the -dev packages the build links), then runs the whole suite. Extra arguments go to `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
for package in libpq-dev libssl-dev libargon2-dev; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "test: installing ${missing[*]}"
    sudo_prefix=()
    [[ $(id -u) -eq 0 ]] || sudo_prefix=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_prefix[@]}" apt-get update -qq
    "${sudo_prefix[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

exec swift test "$@"
