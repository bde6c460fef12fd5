import KontoWireFuzzSupport

// Built with `-sanitize=fuzzer -DFUZZING` by scripts/fuzz-wire.sh passkey; a plain build is a replayer.

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    PasskeyFuzzHarness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// SwiftPM renames an executable's `main`; this hands control to libFuzzer's driver (see WireFuzz.swift).
@_cdecl("konto_passkey_fuzz_main")
func kontoPasskeyFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput)
}
#else
/// Without libFuzzer: replays corpus files, directories or crash reproducers, or writes the seeds.
@main
struct PasskeyFuzzReplay {
    static func main() throws {
        try FuzzReplay.main(arguments: Array(CommandLine.arguments.dropFirst()), seeds: PasskeyFuzzHarness.seeds, body: PasskeyFuzzHarness.run)
    }
}
#endif
