import KontoWire
import NIOCore

/// Feeds arbitrary bytes through the frame decoder exactly as a server connection would, and
/// every frame it accepts through a server state machine. Crashes, hangs and failed round trips
/// are findings; thrown WireErrors are the expected outcome for most inputs.
func fuzzWireDecoder(_ bytes: UnsafeRawBufferPointer) {
    var buffer = ByteBuffer(bytes: bytes)
    var machine = ServerConnectionStateMachine(configuration: .init(
        serverName: "fuzz",
        methods: ["m"],
        secret: WireSecret("fuzz"),
        maxInFlight: 4,
        maxFrameLength: 1 << 16
    ))
    _ = machine.channelActive(nonce: [UInt8](repeating: 0, count: 32))
    while true {
        let frame: WireFrame
        do {
            guard let decoded = try WireFrameCodec.decode(&buffer, maximumLength: 1 << 16) else { return }
            frame = decoded
        } catch {
            _ = machine.errorCaught(error)
            return
        }
        // What we decode, we must be able to encode and decode back to the same frame.
        var encoded = ByteBuffer()
        WireFrameCodec.encode(frame, into: &encoded)
        let size = encoded.readableBytes
        guard let again = try? WireFrameCodec.decode(&encoded, maximumLength: Int(UInt32.max)), again == frame,
              encoded.readableBytes == 0
        else {
            fatalError("round trip changed the frame: \(frame)")
        }
        precondition(WireFrameCodec.encodedSize(frame) == size, "encodedSize disagrees with encode")
        _ = machine.frameReceived(frame)
        _ = machine.answerWritten(correlationID: frame.correlationID)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzWireDecoder(UnsafeRawBufferPointer(start: data, count: size))
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
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Without libFuzzer: replay corpus files (or crash reproducers) through the same function.
@main
struct WireFuzzReplay {
    static func main() throws {
        let paths = CommandLine.arguments.dropFirst()
        for path in paths {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            data.withUnsafeBytes { fuzzWireDecoder($0) }
        }
        print("replayed \(paths.count) input(s) without a finding")
    }
}
#endif
