import KontoWire
import NIOCore
import Testing

@Suite("Golden frames")
struct GoldenFrameTests {
    @Test("every kind has a golden frame")
    func everyKindCovered() {
        let kinds = Set(GoldenFrames.all.map(\.frame.kind))
        #expect(kinds == Set(WireMessageKind.allCases))
    }

    @Test("encoding matches the checked-in bytes", arguments: GoldenFrames.all.indices)
    func encodes(index: Int) {
        let golden = GoldenFrames.all[index]
        var buffer = ByteBuffer()
        WireFrameCodec.encode(golden.frame, into: &buffer)
        #expect(buffer.hexString == golden.hex, "\(golden.name)")
    }

    @Test("the checked-in bytes decode to the frame, consuming them exactly", arguments: GoldenFrames.all.indices)
    func decodes(index: Int) throws {
        let golden = GoldenFrames.all[index]
        var buffer = ByteBuffer(hex: golden.hex)
        let frame = try WireFrameCodec.decode(&buffer)
        #expect(frame == golden.frame, "\(golden.name)")
        #expect(buffer.readableBytes == 0)
    }

    @Test("encodedSize agrees with the encoder", arguments: GoldenFrames.all.indices)
    func encodedSize(index: Int) {
        let golden = GoldenFrames.all[index]
        #expect(WireFrameCodec.encodedSize(golden.frame) == golden.hex.count / 2)
    }
}
