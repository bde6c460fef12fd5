import KontoWire
import KontoWireFuzzSupport
import NIOCore

/// The client target's seed corpus (Tests/Fuzz/corpus/client), regenerated with
/// `swift run konto-wire-client-fuzz --write-seeds Tests/Fuzz/corpus/client`.
/// Every input starts after a completed handshake; correlation ids count up from 1.
enum ClientFuzzSeeds {
    static func all() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(String, [UInt8])] = []
        func seed(_ name: String, _ build: (inout FuzzInputWriter) -> Void) {
            var writer = FuzzInputWriter()
            build(&writer)
            seeds.append((name, writer.bytes))
        }
        func send(_ w: inout FuzzInputWriter, flags: UInt8 = 7, method: String = "echo", payload: String = "{}") {
            w.step(ClientFuzzStep.sendRequest.rawValue, [flags] + FuzzInputWriter.shortBytes(method) + FuzzInputWriter.shortBytes(payload))
        }
        func response(_ id: UInt64, _ payload: String = #"{"ok":true}"#) -> WireFrame {
            WireFrame(correlationID: id, message: .response(.init(payload: ByteBuffer(string: payload))))
        }

        seed("request-response") { w in
            send(&w)
            w.frame(response(1))
        }
        seed("responses-out-of-order") { w in
            send(&w)
            send(&w, flags: 0, method: "profile.load")
            send(&w, flags: 1)
            w.frame(response(3))
            w.frame(response(1))
            w.step(ClientFuzzStep.respond.rawValue, [0, 0] + FuzzInputWriter.shortBytes("{}"))
        }
        seed("error-answers") { w in
            send(&w)
            send(&w)
            w.frame(WireFrame(correlationID: 2, message: .error(.init(code: KontoErrorCode(rawValue: "account.notFound"), message: "no such account", isRetryable: false, details: Array(#"{"id":"x"}"#.utf8)))))
            w.step(ClientFuzzStep.respondWithError.rawValue, [0, 0, 1] + FuzzInputWriter.shortBytes("wire.overloaded") + FuzzInputWriter.shortBytes("busy"))
        }
        seed("connection-error") { w in
            send(&w)
            w.frame(WireFrame(correlationID: 0, message: .error(.init(code: KontoErrorCode(rawValue: "wire.shuttingDown"), message: "bye", isRetryable: true))))
            send(&w)
        }
        seed("answer-for-unknown-id") { w in
            w.frame(response(42))
            w.frame(WireFrame(correlationID: 43, message: .error(.init(code: KontoErrorCode(rawValue: "c"), message: "m", isRetryable: false))))
            send(&w)
            w.frame(response(1))
            w.frame(response(1))
        }
        seed("ping-pong-heartbeat") { w in
            w.frame(WireFrame(correlationID: 5, message: .ping(.init())))
            w.step(ClientFuzzStep.heartbeatDue.rawValue)
            w.frame(WireFrame(correlationID: 0, message: .pong(.init())))
            w.step(ClientFuzzStep.heartbeatDue.rawValue)
            w.step(ClientFuzzStep.heartbeatDue.rawValue)
        }
        seed("events-and-acks") { w in
            w.frame(WireFrame(correlationID: 3, message: .event(.init(subscriptionID: 1, topic: "account.created", payload: ByteBuffer(string: "{}")))))
            w.frame(WireFrame(correlationID: 3, message: .ack(.init())))
        }
        seed("goaway-drains") { w in
            send(&w)
            send(&w)
            send(&w)
            w.frame(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 2, reason: "server shutting down"))))
            send(&w)
            w.frame(response(2))
            w.frame(response(1))
        }
        seed("goaway-steps") { w in
            send(&w)
            send(&w)
            w.step(ClientFuzzStep.goaway.rawValue, [1])
            w.step(ClientFuzzStep.newConnection.rawValue)
            w.step(ClientFuzzStep.goaway.rawValue, [0])
        }
        seed("timeouts") { w in
            send(&w)
            send(&w)
            w.step(ClientFuzzStep.requestTimedOut.rawValue, [0, 0])
            w.frame(response(1))
            w.step(ClientFuzzStep.requestTimedOut.rawValue, [0, 9])
        }
        seed("channel-events") { w in
            send(&w)
            w.step(ClientFuzzStep.errorCaught.rawValue, [1])
            send(&w)
            w.step(ClientFuzzStep.newConnection.rawValue)
            send(&w)
            w.step(ClientFuzzStep.channelInactive.rawValue)
        }
        seed("handshake-from-input") { w in
            w.step(ClientFuzzStep.newConnectionAwaitingChallenge.rawValue)
            send(&w)
            w.step(ClientFuzzStep.challenge.rawValue, Array(0..<32))
            w.step(ClientFuzzStep.welcome.rawValue, [1] + FuzzInputWriter.shortBytes("server"))
            send(&w)
            w.frame(response(1))
        }
        seed("handshake-refused") { w in
            w.step(ClientFuzzStep.newConnectionAwaitingChallenge.rawValue)
            w.frame(WireFrame(correlationID: 0, message: .error(.init(code: KontoErrorCode(rawValue: "wire.authenticationFailed"), message: "peer authentication failed", isRetryable: false))))
            w.step(ClientFuzzStep.newConnectionAwaitingChallenge.rawValue)
            w.step(ClientFuzzStep.challenge.rawValue, Array(repeating: 7, count: 32))
            w.step(ClientFuzzStep.welcome.rawValue, [2] + FuzzInputWriter.shortBytes("server"))
        }
        seed("unexpected-frames") { w in
            w.frame(WireFrame(correlationID: 1, message: .request(.init(method: "echo", payload: ByteBuffer()))))
            w.step(ClientFuzzStep.newConnection.rawValue)
            w.frame(WireFrame(correlationID: 0, message: .welcome(.init(version: 1, serverName: "s", methods: [], maxInFlight: 1, maxFrameLength: 1, mac: []))))
        }
        seed("truncated-frame") { w in
            send(&w)
            w.raw([0, 0, 0, 30, 1, 4, 0, 0])
        }
        seed("oversized-length") { w in
            send(&w)
            w.raw([0xFF, 0xFF, 0xFF, 0xFF])
        }
        for shape in 0..<6 {
            seed("big-field-shape-\(shape)") { w in
                send(&w)
                w.step(ClientFuzzStep.bigFrame.rawValue, [UInt8(shape)] + FuzzInputWriter.uint24(1000) + [UInt8(shape % 5), 0])
            }
        }
        // Headers at the name limit (sent) and one byte over it (refused, as WireClient refuses them).
        for field in 0..<3 {
            seed("long-request-field-\(field)") { w in
                w.step(ClientFuzzStep.sendLongRequest.rawValue, [UInt8(field)] + FuzzInputWriter.uint24(255) + [0])
                w.step(ClientFuzzStep.sendLongRequest.rawValue, [UInt8(field)] + FuzzInputWriter.uint24(256) + [0])
                w.frame(response(1))
            }
        }
        // A payload that fits the server's frame limit, and one that does not.
        seed("long-request-payload") { w in
            w.step(ClientFuzzStep.sendLongRequest.rawValue, [3] + FuzzInputWriter.uint24(100_000))
            w.step(ClientFuzzStep.sendLongRequest.rawValue, [3] + FuzzInputWriter.uint24(131_072))
            w.frame(response(1))
        }
        return seeds
    }
}
