import KontoWireFuzzSupport

// Built with `-sanitize=fuzzer -DFUZZING` by scripts/fuzz-wire.sh; a plain build is a replayer.

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ServerFuzzHarness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// SwiftPM links executables with `main` renamed to `<module>_main`, so libFuzzer's own `main`
/// is never used; this entry point hands control to libFuzzer's driver instead.
@_cdecl("konto_wire_fuzz_main")
func kontoWireFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput)
}
#else
/// Without libFuzzer: replays corpus files, directories or crash reproducers, or writes the seeds.
@main
struct WireFuzzReplay {
    static func main() throws {
        try FuzzReplay.main(
            arguments: Array(CommandLine.arguments.dropFirst()),
            seeds: ServerFuzzSeeds.all,
            body: ServerFuzzHarness.run
        )
    }
}
#endif
