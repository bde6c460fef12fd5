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

    /// The handshake's proofs, computed independently (Python's hmac) from docs/PROTOCOL.md, "Handshake": the
    /// caller's key from the root secret, then the client's and the server's proof over the transcript of the golden
    /// challenge and client hello. Changing them is changing the protocol.
    @Test("the handshake's peer key and proofs match the documented construction")
    func handshakeProofs() {
        let root = WireSecret("konto-golden-secret")
        #expect(ByteBuffer(bytes: root.peerKeyBytes(for: "identity")).hexString == "f76522e34099b3070d659eb1a2b7fc0bd943279e8f269b066909d83a49edd112")
        // Identity's verifier at Profile, what Profile holds: HMAC-SHA256(K(identity), "konto.wire.verifier.v1:profile").
        #expect(ByteBuffer(bytes: root.verifierBytes(caller: "identity", server: "profile")).hexString == "d4b9ff1af4311a146a4730cd2400b381a173272ad0df8fdd9388491d9ba2d4bc")
        #expect(root.proofKey(caller: "identity", server: "profile").kind == .verifier(caller: "identity", server: "profile"))
        let transcript = WireHandshake.Transcript(
            serverNonce: Array(0..<32), serverVersions: [2], serviceName: "identity", clientVersions: [2], clientNonce: Array(repeating: 0xBB, count: 32)
        )
        let key = root.key(forPeer: "identity")
        #expect(ByteBuffer(bytes: WireHandshake.clientProof(key: key, transcript: transcript)).hexString == "a9f988fd2decdf180d87b2380b2d4d4d791926301e8c17774d2b1a80c6dbbe64")
        #expect(
            ByteBuffer(bytes: WireHandshake.serverProof(key: key, transcript: transcript, version: 2, serverName: "profile")).hexString
                == "a2db6cd25526e238383681b887cd529e3f0925a6a78ae1a6833f6c25d905af4a"
        )
    }
}
