# Sourced by scripts/test.sh and deploy/rehearse.sh, so both use one build (the rehearsal's images take the tests'
# debug binaries; with other flags SwiftPM would build everything again).
#
# On CI (CI=true) the debug build carries no debug information: nobody attaches a debugger to a CI run, test failures
# name their source lines through swift-testing's own source locations, and a crash's backtrace still names its
# functions from the symbol table. What it saves is compiling and linking the DWARF of every module, and the size of the
# debug binaries the rehearsal copies into its images. Elsewhere the default build is kept, so `swift build` and
# `swift test` run by hand share scripts/test.sh's build instead of rebuilding everything.
konto_build_flags=()
if [[ ${CI:-} == true ]]; then
    konto_build_flags=(-Xswiftc -gnone -Xcc -g0)
fi
