#!/usr/bin/env bash
# Builds a wire protocol fuzz target with libFuzzer and runs it for a bounded time.
# Usage: scripts/fuzz-wire.sh [server|client|passkey] [seconds]   (defaults: server, 60)
#   server  konto-wire-fuzz: ServerConnectionStateMachine after a completed handshake
#   client  konto-wire-client-fuzz: ClientConnectionStateMachine after a completed handshake
#   passkey konto-passkey-fuzz: CBOR, COSE keys, authenticator data, passkey registrations and assertions
# Extra libFuzzer flags can be passed in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-seed=1 -runs=100000").
# Findings go to fuzz-artifacts/<target>/ (git-ignored); replay one with the plain build, e.g.
#   swift run konto-wire-fuzz fuzz-artifacts/server/crash-…
set -euo pipefail
target=server
if [[ "${1:-}" == server || "${1:-}" == client || "${1:-}" == passkey ]]; then
    target="$1"
    shift
fi
seconds="${1:-60}"
cd "$(dirname "$0")/.."

case "$target" in
    server) product=konto-wire-fuzz; seeds=(Tests/Fuzz/corpus/server Tests/Fuzz/corpus/wire) ;;
    client) product=konto-wire-client-fuzz; seeds=(Tests/Fuzz/corpus/client) ;;
    passkey) product=konto-passkey-fuzz; seeds=(Tests/Fuzz/corpus/passkey) ;;
esac

flags=(-c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -parse-as-library)
swift build "${flags[@]}" --product "$product"
binary="$(swift build "${flags[@]}" --show-bin-path)/$product"

# The checked-in seeds stay as they are; the corpus grows in the scratch directory.
corpus=".build-fuzz/corpus-$target"
artifacts="fuzz-artifacts/$target"
mkdir -p "$corpus" "$artifacts"
for directory in "${seeds[@]}"; do
    cp -n "$directory"/* "$corpus/"
done

# Swift's backtracer would take the trap of a failed precondition before libFuzzer sees it, and the
# crashing input would be lost: leave the signal to libFuzzer, which writes it to $artifacts.
export SWIFT_BACKTRACE=enable=no

# max_len well above 64 KiB: a field over the format's 65,535-byte limit must be reachable as
# raw input too, not only through the harness's big-field steps. The harnesses' frame limit is
# 128 KiB, so 300,000 bytes also covers frames just over it.
"$binary" "$corpus" \
    -max_total_time="$seconds" \
    -max_len=300000 \
    -rss_limit_mb=2048 \
    -timeout=10 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" \
    ${FUZZ_FLAGS:-}
