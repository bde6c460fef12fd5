# Sourced by scripts/test.sh and deploy/rehearse.sh, so both use one build (the rehearsal's images take the tests'
# debug binaries; with other flags SwiftPM would build everything again).
#
# On CI (CI=true) the debug build carries no debug information: nobody attaches a debugger to a CI run, test failures
# name their source lines through swift-testing's own source locations, and a crash's backtrace still names its
# functions from the symbol table. What it saves is compiling and linking the DWARF of every module, and the size of the
# debug binaries the rehearsal copies into its images. Elsewhere the default build is kept, so `swift build` and
# `swift test` by hand share scripts/test.sh's build instead of rebuilding everything.
#
# On CI the build directory also lives in the user's cache (KONTO_BUILD_CACHE, default ~/.cache/konto/build; `off`
# keeps it in the clone), as the Python judges' environments do: a fresh clone then compiles only Konto's own
# targets. The dependencies (two BoringSSL copies, NIO, PostgresNIO, Hummingbird, ...) are checked out and built there,
# at paths that do not change from clone to clone, so SwiftPM finds them up to date; Konto's sources are at the new
# clone's path, so every Konto target is compiled again from them (measured: `swift build --build-tests` of a fresh
# clone took 1,009 s with an empty build directory, 524 s with the dependencies already built there). A build directory is SwiftPM's to keep consistent, as it is for `swift build` run twice by hand.
# The lock keeps two runs on one machine from building into it under each other's tests.
konto_build_flags=()
if [[ ${CI:-} == true ]]; then
    konto_build_flags=(-Xswiftc -gnone -Xcc -g0)
    if [[ ${KONTO_BUILD_CACHE:-} != off ]]; then
        konto_scratch=${KONTO_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/konto/build}
        mkdir -p "$konto_scratch"
        exec {konto_build_lock}>"$konto_scratch.lock"
        if ! flock -n "$konto_build_lock"; then
            echo "build-flags: waiting for another run's build in $konto_scratch" >&2
            flock "$konto_build_lock"
        fi
        konto_build_flags+=(--scratch-path "$konto_scratch")
        # The clone's .build is that directory, so what names .build/debug (README's quick start, run as written by
        # ReadmeQuickStartTests) finds this build's programs.
        [[ -e .build ]] || ln -s "$konto_scratch" .build
    fi
fi
