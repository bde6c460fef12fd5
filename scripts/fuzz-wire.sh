#!/usr/bin/env bash
# Builds the wire frame decoder fuzz target with libFuzzer and runs it for a bounded time.
# Usage: scripts/fuzz-wire.sh [seconds]   (default 60)
# Findings go to fuzz-artifacts/ (git-ignored); replay one with
#   swift run konto-wire-fuzz fuzz-artifacts/crash-…
set -euo pipefail
seconds="${1:-60}"
cd "$(dirname "$0")/.."

swift build -c release --scratch-path .build-fuzz --product konto-wire-fuzz \
    -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -parse-as-library
binary="$(swift build -c release --scratch-path .build-fuzz --show-bin-path)/konto-wire-fuzz"

# The checked-in seeds stay as they are; the corpus grows in the scratch directory.
corpus=.build-fuzz/corpus-wire
mkdir -p "$corpus" fuzz-artifacts
cp -n Tests/Fuzz/corpus/wire/* "$corpus/"

"$binary" "$corpus" \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -rss_limit_mb=2048 \
    -timeout=10 \
    -print_final_stats=1 \
    -artifact_prefix=fuzz-artifacts/
