import KontoWire
import NIOCore

/// One example frame per kind (two for hello and request) and its exact encoding.
/// The hex strings were produced independently from docs/PROTOCOL.md; changing them is changing
/// the protocol.
enum GoldenFrames {
    static let traceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    static let all: [(name: String, frame: WireFrame, hex: String)] = [
        (
            "hello (challenge)",
            WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: Array(0..<32), supportedVersions: [2])))),
            "00000031020100000000000000000000000020000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0102"
        ),
        (
            "hello (client)",
            WireFrame(correlationID: 0, message: .hello(.clientHello(.init(
                serviceName: "identity",
                supportedVersions: [2],
                mac: Array(repeating: 0xAA, count: 32),
                nonce: Array(repeating: 0xBB, count: 32)
            )))),
            "0000005d0201000000000000000000000100086964656e7469747901020020aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0020bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
        ),
        (
            "welcome",
            WireFrame(correlationID: 0, message: .welcome(.init(
                version: 2,
                serverName: "profile",
                methods: ["profile.load", "profile.modify"],
                maxInFlight: 128,
                maxFrameLength: 1_048_576,
                mac: Array(repeating: 0xCC, count: 32)
            ))),
            "0000006002020000000000000000000002000770726f66696c650002000c70726f66696c652e6c6f6164000e70726f66696c652e6d6f6469667900000080001000000020cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
        ),
        (
            "request (all headers)",
            WireFrame(correlationID: 7, message: .request(.init(
                method: "profile.load",
                timeoutMilliseconds: 5000,
                requestID: "req-1",
                traceParent: traceParent,
                payload: ByteBuffer(string: #"{"id":1}"#)
            ))),
            "0000006d0203000000000000000000070401000c70726f66696c652e6c6f6164020004000013880300057265712d3104003730302d30616637363531393136636434336464383434386562323131633830333139632d623761643662373136393230333333312d30317b226964223a317d"
        ),
        (
            "request (method only)",
            WireFrame(correlationID: 1, message: .request(.init(method: "m", payload: ByteBuffer()))),
            "00000011020300000000000000000001010100016d"
        ),
        (
            "response",
            WireFrame(correlationID: 7, message: .response(.init(payload: ByteBuffer(string: #"{"ok":true}"#)))),
            "000000170204000000000000000000077b226f6b223a747275657d"
        ),
        (
            "error",
            WireFrame(correlationID: 7, message: .error(.init(
                code: KontoErrorCode(rawValue: "wire.unknownMethod"),
                message: "unknown method 'x'",
                isRetryable: false
            ))),
            "000000350205000000000000000000070012776972652e756e6b6e6f776e4d6574686f640012756e6b6e6f776e206d6574686f642027782700"
        ),
        (
            "error with details",
            WireFrame(correlationID: 9, message: .error(.init(
                code: KontoErrorCode(rawValue: "account.validationFailed"),
                message: "invalid",
                isRetryable: false,
                details: Array(#"{"fields":[]}"#.utf8)
            ))),
            "0000003d02050000000000000000000900186163636f756e742e76616c69646174696f6e4661696c65640007696e76616c6964007b226669656c6473223a5b5d7d"
        ),
        (
            "event",
            WireFrame(correlationID: 3, message: .event(.init(
                subscriptionID: 7,
                topic: "account.deleted",
                payload: ByteBuffer(string: #"{"accountId":"a1"}"#)
            ))),
            "000000370206000000000000000000030000000000000007000f6163636f756e742e64656c657465647b226163636f756e744964223a226131227d"
        ),
        ("ack", WireFrame(correlationID: 3, message: .ack(.init())), "0000000c020700000000000000000003"),
        ("nack, retry", WireFrame(correlationID: 3, message: .ack(.init(.retry(reason: "busy")))), "0000001302070000000000000000000301000462757379"),
        ("nack, reject", WireFrame(correlationID: 3, message: .ack(.init(.reject(reason: "bad")))), "00000012020700000000000000000003020003626164"),
        (
            "request opening a subscription (credit 16)",
            WireFrame(correlationID: 5, message: .request(.init(method: "events", credit: 16, payload: ByteBuffer(string: "{}")))),
            "0000001f020300000000000000000005020100066576656e7473050004000000107b7d"
        ),
        ("ping", WireFrame(correlationID: 9, message: .ping(.init())), "0000000c020800000000000000000009"),
        ("pong", WireFrame(correlationID: 9, message: .pong(.init())), "0000000c020900000000000000000009"),
        (
            "goaway",
            WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 42, reason: "server shutting down"))),
            "0000002a020a00000000000000000000000000000000002a0014736572766572207368757474696e6720646f776e"
        ),
    ]
}

extension ByteBuffer {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes: bytes)
    }

    var hexString: String {
        self.readableBytesView.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
