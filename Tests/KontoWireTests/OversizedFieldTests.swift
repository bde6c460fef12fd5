import KontoWire
import NIOCore
import Testing

/// Every field an encoder writes from outside data is cut, never trapped on; every name field a decoder reads is
/// bounded (``WireLimits``).
@Suite("Oversized fields")
struct OversizedFieldTests {
    static func roundTrip(_ frame: WireFrame) throws -> WireFrame? {
        var buffer = ByteBuffer()
        WireFrameCodec.encode(frame, into: &buffer)
        return try WireFrameCodec.decode(&buffer, maximumLength: 16 << 20)
    }

    /// 70,000 bytes of UTF-8 whose characters are 1 to 4 bytes long, so a cut at 65,535 lands inside one.
    static let longText: String = String(repeating: "aé€😀", count: 7_000)

    @Test("an error message over 65,535 bytes is cut on a character boundary, and still decodes")
    func longErrorMessage() throws {
        let frame = WireFrame(correlationID: 7, message: .error(.init(code: KontoErrorCode(rawValue: "x.y"), message: Self.longText, isRetryable: true, details: [1, 2])))
        guard case .error(let body)? = try Self.roundTrip(frame)?.message else {
            Issue.record("not an error frame")
            return
        }
        #expect(body.message.utf8.count <= WireLimits.maximumShortFieldLength)
        #expect(body.message.utf8.count > WireLimits.maximumShortFieldLength - 4)
        #expect(Self.longText.hasPrefix(body.message))
        #expect(body.details == [1, 2])
        #expect(body.code.rawValue == "x.y")
    }

    @Test("a goaway reason over 65,535 bytes is cut, and still decodes")
    func longGoAwayReason() throws {
        guard case .goaway(let goaway)? = try Self.roundTrip(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 3, reason: Self.longText))))?.message else {
            Issue.record("not a goaway frame")
            return
        }
        #expect(Self.longText.hasPrefix(goaway.reason))
        #expect(goaway.reason.utf8.count <= WireLimits.maximumShortFieldLength)
    }

    @Test("name fields are cut at 255 bytes by the encoder", arguments: [
        WireFrame(correlationID: 1, message: .error(.init(code: KontoErrorCode(rawValue: String(repeating: "c", count: 300)), message: "m", isRetryable: false))),
        WireFrame(correlationID: 1, message: .event(.init(subscriptionID: 1, topic: String(repeating: "t", count: 70_000), payload: ByteBuffer()))),
        WireFrame(correlationID: 0, message: .hello(.clientHello(.init(serviceName: String(repeating: "s", count: 70_000), mac: [], nonce: [UInt8](repeating: 0, count: 32))))),
        WireFrame(correlationID: 0, message: .welcome(.init(version: 2, serverName: String(repeating: "n", count: 300), methods: [String(repeating: "m", count: 300)], maxInFlight: 1, maxFrameLength: 1, mac: []))),
        WireFrame(correlationID: 1, message: .request(.init(
            method: String(repeating: "m", count: 70_000),
            requestID: String(repeating: "r", count: 70_000),
            traceParent: String(repeating: "p", count: 300),
            payload: ByteBuffer()
        ))),
    ])
    func namesCut(_ frame: WireFrame) throws {
        let decoded = try #require(try Self.roundTrip(frame))
        let names: [String] = switch decoded.message {
        case .error(let body): [body.code.rawValue]
        case .event(let event): [event.topic]
        case .hello(.clientHello(let hello)): [hello.serviceName]
        case .welcome(let welcome): [welcome.serverName] + welcome.methods
        case .request(let request): [request.method, request.requestID ?? "", request.traceParent ?? ""]
        default: []
        }
        #expect(!names.isEmpty)
        for name in names {
            #expect(name.utf8.count == WireLimits.maximumNameLength)
        }
    }

    @Test("byte lists and byte strings are cut at their count's limit")
    func byteFieldsCut() throws {
        let frame = WireFrame(correlationID: 0, message: .hello(.clientHello(.init(
            serviceName: "s",
            supportedVersions: [UInt8](repeating: 1, count: 600),
            mac: [UInt8](repeating: 2, count: 70_000),
            nonce: [UInt8](repeating: 3, count: 32)
        ))))
        guard case .hello(.clientHello(let hello))? = try Self.roundTrip(frame)?.message else {
            Issue.record("not a client hello")
            return
        }
        #expect(hello.supportedVersions.count == WireLimits.maximumByteListCount)
        #expect(hello.mac.count == WireLimits.maximumShortFieldLength)
    }

    @Test("a welcome listing more than 65,535 methods says how many it wrote")
    func manyMethods() throws {
        let methods = (0..<(WireLimits.maximumMethodCount + 10)).map { "m\($0)" }
        let frame = WireFrame(correlationID: 0, message: .welcome(.init(version: 2, serverName: "s", methods: methods, maxInFlight: 1, maxFrameLength: 1, mac: [])))
        guard case .welcome(let welcome)? = try Self.roundTrip(frame)?.message else {
            Issue.record("not a welcome")
            return
        }
        #expect(welcome.methods.count == WireLimits.maximumMethodCount)
        #expect(welcome.methods.last == methods[WireLimits.maximumMethodCount - 1])
    }

    // MARK: Decoding

    static func str16(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    static func header(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
        [tag] + str16(value)
    }

    static let long = [UInt8](repeating: 0x61, count: WireLimits.maximumNameLength + 1)

    @Test("a decoder refuses every name field over 255 bytes", arguments: [
        ("method", 3, [1] + header(1, long)),
        ("request id", 3, [2] + header(1, Array("m".utf8)) + header(3, long)),
        ("traceparent", 3, [2] + header(1, Array("m".utf8)) + header(4, long)),
        ("hello service name", 1, [1] + str16(long) + [1, 1] + str16([])),
        ("welcome server name", 2, [1] + str16(long) + [0, 0] + [0, 0, 0, 1] + [0, 0, 0, 1]),
        ("welcome method", 2, [1] + str16([0x73]) + [0, 1] + str16(long) + [0, 0, 0, 1] + [0, 0, 0, 1]),
        ("error code", 5, str16(long) + str16([]) + [0]),
        ("event topic", 6, str16(long)),
    ] as [(String, UInt8, [UInt8])])
    func namesRefused(_ field: String, kind: UInt8, body: [UInt8]) throws {
        var buffer = WireFrameDecoderTests.rawFrame(kind: kind, body: body)
        #expect {
            _ = try WireFrameCodec.decode(&buffer, maximumLength: 1 << 20)
        } throws: { error in
            guard let error = error as? WireError else { return false }
            return error.code == WireError.Code.malformedFrame && error.message.contains(field)
        }
    }

    @Test("a name of exactly 255 bytes is accepted")
    func nameAtLimit() throws {
        let name = [UInt8](repeating: 0x61, count: WireLimits.maximumNameLength)
        var buffer = WireFrameDecoderTests.rawFrame(kind: 3, body: [1] + Self.header(1, name))
        let frame = try WireFrameCodec.decode(&buffer)
        guard case .request(let request)? = frame?.message else {
            Issue.record("not a request")
            return
        }
        #expect(request.method.utf8.count == WireLimits.maximumNameLength)
    }
}
