import KontoWire
import KontoWireFuzzSupport
import NIOCore

/// The server target's seed corpus (Tests/Fuzz/corpus/server), regenerated with
/// `swift run konto-wire-fuzz --write-seeds Tests/Fuzz/corpus/server`.
enum ServerFuzzSeeds {
    static func all() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(String, [UInt8])] = []
        func seed(_ name: String, _ build: (inout FuzzInputWriter) -> Void) {
            var writer = FuzzInputWriter()
            build(&writer)
            seeds.append((name, writer.bytes))
        }
        func request(_ id: UInt64, _ method: String, timeout: UInt32? = nil, payload: String = "{}") -> WireFrame {
            WireFrame(correlationID: id, message: .request(.init(
                method: method,
                timeoutMilliseconds: timeout,
                requestID: "req-\(id)",
                traceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                payload: ByteBuffer(string: payload)
            )))
        }

        seed("echo") { w in
            w.frame(request(1, "echo", payload: #"{"name":"a"}"#))
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
        }
        seed("answers-of-each-kind") { w in
            w.frame(request(1, "echo"))
            w.frame(request(2, "profile.load", payload: "\u{FF}not json"))
            w.frame(request(3, "m"))
            w.step(ServerFuzzStep.answerErrorQuotingPayload.rawValue, [1])
            w.step(ServerFuzzStep.answerErrorQuotingMethod.rawValue, [0])
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
        }
        seed("unknown-method") { w in
            w.frame(request(7, "no.such.method"))
        }
        seed("ping-pong-ack-goaway") { w in
            w.frame(WireFrame(correlationID: 9, message: .ping(.init())))
            w.frame(WireFrame(correlationID: 9, message: .pong(.init())))
            w.frame(WireFrame(correlationID: 4, message: .ack(.init())))
            w.frame(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 0, reason: "bye"))))
        }
        seed("deadline") { w in
            w.frame(request(1, "echo", timeout: 5))
            w.step(ServerFuzzStep.deadlineExpired.rawValue, [0, 0])
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
            w.step(ServerFuzzStep.answerUnknownID.rawValue, [1])
        }
        seed("overloaded-and-held-read") { w in
            for id in 1...4 { w.frame(request(UInt64(id), "echo")) }
            w.step(ServerFuzzStep.readRequested.rawValue)
            w.step(ServerFuzzStep.answerEcho.rawValue, [2])
            w.step(ServerFuzzStep.readRequested.rawValue)
        }
        seed("duplicate-correlation-id") { w in
            w.frame(request(5, "echo"))
            w.frame(request(5, "echo"))
        }
        seed("graceful-shutdown-drains") { w in
            w.frame(request(1, "echo"))
            w.frame(request(2, "m"))
            w.step(ServerFuzzStep.gracefulShutdown.rawValue)
            w.frame(request(3, "echo"))
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
        }
        seed("idle") { w in
            w.frame(request(1, "echo"))
            w.step(ServerFuzzStep.idleTimeout.rawValue)
            w.step(ServerFuzzStep.answerEcho.rawValue, [0])
            w.step(ServerFuzzStep.idleTimeout.rawValue)
        }
        seed("handshake-from-input") { w in
            w.step(ServerFuzzStep.newConnectionAwaitingHello.rawValue)
            w.step(ServerFuzzStep.validHello.rawValue, FuzzInputWriter.shortBytes("other-service"))
            w.frame(request(1, "echo"))
            w.step(ServerFuzzStep.newConnectionAwaitingHello.rawValue)
            w.frame(request(1, "echo"))
            w.step(ServerFuzzStep.newConnection.rawValue)
            w.frame(request(1, "m"))
        }
        seed("errors-and-close") { w in
            w.frame(request(1, "echo"))
            w.step(ServerFuzzStep.errorCaught.rawValue, [2])
            w.step(ServerFuzzStep.newConnection.rawValue)
            w.frame(request(1, "echo"))
            w.step(ServerFuzzStep.channelInactive.rawValue)
            w.frame(request(2, "echo"))
        }
        seed("truncated-frame") { w in
            w.raw([0, 0, 0, 40, 1, 3, 0, 0])
        }
        seed("bad-version") { w in
            w.raw([0, 0, 0, 12, 9, 8, 0, 0] + FuzzInputWriter.uint64(1))
        }
        seed("oversized-length") { w in
            w.raw([0xFF, 0xFF, 0xFF, 0xFF])
        }
        // One of each big-field shape at a modest size; the fuzzer finds the sizes that matter.
        for shape in 0..<8 {
            seed("big-field-shape-\(shape)") { w in
                w.frame(request(1, "echo"))
                w.step(ServerFuzzStep.bigFrame.rawValue, [UInt8(shape)] + FuzzInputWriter.uint24(1000) + [UInt8(shape % 5), 2])
                w.step(ServerFuzzStep.answerErrorQuotingPayload.rawValue, [0])
            }
        }
        seed("answers-of-other-kinds") { w in
            for id in 1...3 { w.frame(request(UInt64(id), "echo", payload: #"{"q":"\u{FF}"}"#)) }
            w.step(ServerFuzzStep.answerOther.rawValue, [0, 0])
            w.step(ServerFuzzStep.answerOther.rawValue, [0, 0x11])
            w.step(ServerFuzzStep.answerOther.rawValue, [0, 2])
            w.frame(request(4, "m"))
            w.step(ServerFuzzStep.answerOther.rawValue, [0, 3])
        }
        // A 100,000-byte payload rejected with a WireError quoting it in message and details: the
        // error frame was over the frame limit (the fix drops the details).
        seed("regression-error-details-over-frame-limit") { w in
            w.step(ServerFuzzStep.bigFrame.rawValue, [1] + FuzzInputWriter.uint24(0) + [0, 1] + FuzzInputWriter.uint24(100_000))
            w.step(ServerFuzzStep.answerErrorQuotingPayload.rawValue, [0])
        }
        // A 65,530-byte method name (cut to the 255-byte name limit by the peer's encoder), answered
        // with wire.unknownMethod quoting it: before WireLimits the reply's message was over 65,535
        // bytes and crashed the encoder.
        seed("regression-long-unknown-method") { w in
            w.step(ServerFuzzStep.bigFrame.rawValue, [0] + FuzzInputWriter.uint24(65_530) + [0, 1])
        }
        return seeds
    }
}
