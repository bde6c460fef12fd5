import NIOCore

/// Pure functions turning frames into bytes and back. The NIO handlers and the fuzz target both
/// go through here, so there is exactly one definition of the format.
public enum WireFrameCodec {
    /// Appends the complete frame (length prefix included) to `buffer`.
    public static func encode(_ frame: WireFrame, into buffer: inout ByteBuffer) {
        let lengthIndex = buffer.writerIndex
        buffer.writeInteger(UInt32(0))
        buffer.writeInteger(frame.version)
        buffer.writeInteger(frame.kind.rawValue)
        buffer.writeInteger(frame.flags)
        buffer.writeInteger(frame.correlationID)
        switch frame.message {
        case .hello(.challenge(let challenge)):
            buffer.writeInteger(UInt8(0))
            buffer.writeShortBytes(challenge.nonce)
            buffer.writeByteList(challenge.supportedVersions)
        case .hello(.clientHello(let hello)):
            buffer.writeInteger(UInt8(1))
            buffer.writeShortString(hello.serviceName, maximum: WireLimits.maximumNameLength)
            buffer.writeByteList(hello.supportedVersions)
            buffer.writeShortBytes(hello.mac)
            buffer.writeShortBytes(hello.nonce)
        case .welcome(let welcome):
            buffer.writeInteger(welcome.version)
            buffer.writeShortString(welcome.serverName, maximum: WireLimits.maximumNameLength)
            let methods = welcome.methods.prefix(WireLimits.maximumMethodCount)
            buffer.writeInteger(UInt16(methods.count))
            for method in methods {
                buffer.writeShortString(method, maximum: WireLimits.maximumNameLength)
            }
            buffer.writeInteger(welcome.maxInFlight)
            buffer.writeInteger(welcome.maxFrameLength)
            buffer.writeShortBytes(welcome.mac)
        case .request(let request):
            var count: UInt8 = 1
            if request.timeoutMilliseconds != nil { count += 1 }
            if request.requestID != nil { count += 1 }
            if request.traceParent != nil { count += 1 }
            if request.credit != nil { count += 1 }
            buffer.writeInteger(count)
            buffer.writeHeader(.method, request.method)
            if let timeout = request.timeoutMilliseconds {
                buffer.writeInteger(WireRequestHeaderTag.timeoutMilliseconds.rawValue)
                buffer.writeInteger(UInt16(4))
                buffer.writeInteger(timeout)
            }
            if let requestID = request.requestID {
                buffer.writeHeader(.requestID, requestID)
            }
            if let traceParent = request.traceParent {
                buffer.writeHeader(.traceParent, traceParent)
            }
            if let credit = request.credit {
                buffer.writeInteger(WireRequestHeaderTag.credit.rawValue)
                buffer.writeInteger(UInt16(4))
                buffer.writeInteger(credit)
            }
            buffer.writeImmutableBuffer(request.payload)
        case .response(let response):
            buffer.writeImmutableBuffer(response.payload)
        case .error(let error):
            buffer.writeShortString(error.code.rawValue, maximum: WireLimits.maximumNameLength)
            buffer.writeShortString(error.message, maximum: WireLimits.maximumShortFieldLength)
            buffer.writeInteger(error.isRetryable ? UInt8(1) : UInt8(0))
            buffer.writeBytes(error.details)
        case .event(let event):
            buffer.writeInteger(event.subscriptionID)
            buffer.writeShortString(event.topic, maximum: WireLimits.maximumNameLength)
            buffer.writeImmutableBuffer(event.payload)
        case .ack(let ack):
            switch ack.disposition {
            case .processed:
                break
            case .retry(let reason):
                buffer.writeInteger(WireAck.NegativeCode.retry.rawValue)
                buffer.writeShortString(reason, maximum: WireLimits.maximumShortFieldLength)
            case .reject(let reason):
                buffer.writeInteger(WireAck.NegativeCode.reject.rawValue)
                buffer.writeShortString(reason, maximum: WireLimits.maximumShortFieldLength)
            }
        case .ping, .pong:
            break
        case .goaway(let goaway):
            buffer.writeInteger(goaway.lastCorrelationID)
            buffer.writeShortString(goaway.reason, maximum: WireLimits.maximumShortFieldLength)
        }
        let length = buffer.writerIndex - lengthIndex - WireFrame.lengthFieldSize
        buffer.setInteger(UInt32(truncatingIfNeeded: length), at: lengthIndex)
    }

    /// The encoded size of `frame`, length prefix included, without encoding it.
    public static func encodedSize(_ frame: WireFrame) -> Int {
        var scratch = ByteBufferAllocator().buffer(capacity: 64)
        // Payloads dominate; count them without copying.
        switch frame.message {
        case .request(var request):
            let payloadSize = request.payload.readableBytes
            request.payload = ByteBuffer()
            encode(WireFrame(version: frame.version, correlationID: 0, message: .request(request)), into: &scratch)
            return scratch.readableBytes + payloadSize
        case .response(let response):
            return WireFrame.lengthFieldSize + WireFrame.headerSize + response.payload.readableBytes
        default:
            encode(frame, into: &scratch)
            return scratch.readableBytes
        }
    }

    /// Reads the header of the frame at the start of `buffer` without consuming anything.
    /// Returns the total frame size (prefix included) once the fixed header is readable and valid.
    ///
    /// Throws from the header alone, before the body is buffered: a length over `maximumLength`,
    /// a length too short for the header, an unsupported version, an unknown kind, or flags.
    public static func peekFrameSize(_ buffer: ByteBuffer, maximumLength: Int) throws(WireError) -> Int? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length <= maximumLength else {
            throw .frameTooLarge(Int(length), max: maximumLength)
        }
        guard length >= WireFrame.headerSize else {
            throw .malformedFrame("frame length \(length) is shorter than the \(WireFrame.headerSize)-byte header")
        }
        let base = buffer.readerIndex + WireFrame.lengthFieldSize
        if let version = buffer.getInteger(at: base, as: UInt8.self), !WireProtocolVersion.supported.contains(version) {
            throw .unsupportedVersion(version)
        }
        if let kind = buffer.getInteger(at: base + 1, as: UInt8.self), WireMessageKind(rawValue: kind) == nil {
            throw .malformedFrame("unknown frame kind \(kind)")
        }
        if let flags = buffer.getInteger(at: base + 2, as: UInt16.self), flags != 0 {
            throw .malformedFrame("reserved flags \(flags) must be zero")
        }
        return WireFrame.lengthFieldSize + Int(length)
    }

    /// Decodes exactly one complete frame from the start of `buffer`, consuming it.
    /// Returns nil if the frame is not complete yet. Every byte of the frame must be accounted for.
    public static func decode(_ buffer: inout ByteBuffer, maximumLength: Int = WireFrame.defaultMaximumLength) throws(WireError) -> WireFrame? {
        guard let size = try peekFrameSize(buffer, maximumLength: maximumLength),
              buffer.readableBytes >= size
        else { return nil }
        var frameBuffer = buffer.readSlice(length: size)!
        frameBuffer.moveReaderIndex(forwardBy: WireFrame.lengthFieldSize)
        let version = frameBuffer.readInteger(as: UInt8.self)!
        let kind = WireMessageKind(rawValue: frameBuffer.readInteger(as: UInt8.self)!)!
        let flags = frameBuffer.readInteger(as: UInt16.self)!
        let correlationID = frameBuffer.readInteger(as: UInt64.self)!
        let message = try decodeBody(kind: kind, body: &frameBuffer)
        return WireFrame(version: version, flags: flags, correlationID: correlationID, message: message)
    }

    /// Decodes a body of the given kind; the body must be consumed exactly.
    public static func decodeBody(kind: WireMessageKind, body: inout ByteBuffer) throws(WireError) -> WireMessage {
        let message: WireMessage
        switch kind {
        case .hello:
            switch try body.readWireInteger(as: UInt8.self, "hello stage") {
            case 0:
                let nonce = try body.readShortBytes("hello nonce")
                guard nonce.count == WireHello.Challenge.nonceSize else {
                    throw .malformedFrame("hello nonce must be \(WireHello.Challenge.nonceSize) bytes")
                }
                let versions = try body.readByteList("hello versions")
                message = .hello(.challenge(.init(nonce: nonce, supportedVersions: versions)))
            case 1:
                let name = try body.readShortString("hello service name", maximum: WireLimits.maximumNameLength)
                let versions = try body.readByteList("hello versions")
                let mac = try body.readShortBytes("hello mac")
                let nonce = try body.readShortBytes("hello client nonce")
                guard nonce.count == WireHello.Challenge.nonceSize else {
                    throw .malformedFrame("hello client nonce must be \(WireHello.Challenge.nonceSize) bytes")
                }
                message = .hello(.clientHello(.init(serviceName: name, supportedVersions: versions, mac: mac, nonce: nonce)))
            case let stage:
                throw .malformedFrame("unknown hello stage \(stage)")
            }
        case .welcome:
            let version = try body.readWireInteger(as: UInt8.self, "welcome version")
            let name = try body.readShortString("welcome server name", maximum: WireLimits.maximumNameLength)
            let count = try body.readWireInteger(as: UInt16.self, "welcome method count")
            var methods: [String] = []
            methods.reserveCapacity(min(Int(count), body.readableBytes / 2))
            for _ in 0..<count {
                methods.append(try body.readShortString("welcome method", maximum: WireLimits.maximumNameLength))
            }
            let maxInFlight = try body.readWireInteger(as: UInt32.self, "welcome max in flight")
            let maxFrameLength = try body.readWireInteger(as: UInt32.self, "welcome max frame length")
            let mac = try body.readShortBytes("welcome mac")
            message = .welcome(.init(
                version: version,
                serverName: name,
                methods: methods,
                maxInFlight: maxInFlight,
                maxFrameLength: maxFrameLength,
                mac: mac
            ))
        case .request:
            message = .request(try decodeRequest(&body))
        case .response:
            message = .response(.init(payload: body.readSlice(length: body.readableBytes)!))
        case .error:
            let code = try body.readShortString("error code", maximum: WireLimits.maximumNameLength)
            let text = try body.readShortString("error message", maximum: WireLimits.maximumShortFieldLength)
            let retryable = try body.readWireInteger(as: UInt8.self, "error retryable flag")
            guard retryable <= 1 else { throw .malformedFrame("error retryable flag must be 0 or 1") }
            let details = body.readBytes(length: body.readableBytes) ?? []
            message = .error(.init(code: KontoErrorCode(rawValue: code), message: text, isRetryable: retryable == 1, details: details))
        case .event:
            let subscription = try body.readWireInteger(as: UInt64.self, "event subscription id")
            let topic = try body.readShortString("event topic", maximum: WireLimits.maximumNameLength)
            message = .event(.init(subscriptionID: subscription, topic: topic, payload: body.readSlice(length: body.readableBytes)!))
        case .ack:
            guard body.readableBytes > 0 else {
                message = .ack(.init(.processed))
                break
            }
            let code = try body.readWireInteger(as: UInt8.self, "ack disposition")
            let reason = try body.readShortString("ack reason", maximum: WireLimits.maximumShortFieldLength)
            switch WireAck.NegativeCode(rawValue: code) {
            case .retry: message = .ack(.init(.retry(reason: reason)))
            case .reject: message = .ack(.init(.reject(reason: reason)))
            case nil: throw .malformedFrame("unknown ack disposition \(code)")
            }
        case .ping:
            message = .ping(.init())
        case .pong:
            message = .pong(.init())
        case .goaway:
            let last = try body.readWireInteger(as: UInt64.self, "goaway last correlation id")
            let reason = try body.readShortString("goaway reason", maximum: WireLimits.maximumShortFieldLength)
            message = .goaway(.init(lastCorrelationID: last, reason: reason))
        }
        guard body.readableBytes == 0 else {
            throw .malformedFrame("\(body.readableBytes) trailing bytes in \(kind) frame")
        }
        return message
    }

    private static func decodeRequest(_ body: inout ByteBuffer) throws(WireError) -> WireRequest {
        let count = try body.readWireInteger(as: UInt8.self, "request header count")
        var method: String?
        var timeout: UInt32?
        var requestID: String?
        var traceParent: String?
        var credit: UInt32?
        for _ in 0..<count {
            let tag = try body.readWireInteger(as: UInt8.self, "request header tag")
            let length = try body.readWireInteger(as: UInt16.self, "request header length")
            guard var value = body.readSlice(length: Int(length)) else {
                throw .malformedFrame("request header length \(length) runs past the frame")
            }
            switch WireRequestHeaderTag(rawValue: tag) {
            case .method:
                guard method == nil else { throw .malformedFrame("duplicate method header") }
                let name = try value.readRemainingString("method", maximum: WireLimits.maximumNameLength)
                guard !name.isEmpty else { throw .malformedFrame("empty method name") }
                method = name
            case .timeoutMilliseconds:
                guard timeout == nil else { throw .malformedFrame("duplicate timeout header") }
                guard length == 4 else { throw .malformedFrame("timeout header must be 4 bytes") }
                timeout = value.readInteger(as: UInt32.self)
            case .requestID:
                guard requestID == nil else { throw .malformedFrame("duplicate request id header") }
                requestID = try value.readRemainingString("request id", maximum: WireLimits.maximumNameLength)
            case .traceParent:
                guard traceParent == nil else { throw .malformedFrame("duplicate traceparent header") }
                traceParent = try value.readRemainingString("traceparent", maximum: WireLimits.maximumNameLength)
            case .credit:
                guard credit == nil else { throw .malformedFrame("duplicate credit header") }
                guard length == 4 else { throw .malformedFrame("credit header must be 4 bytes") }
                credit = value.readInteger(as: UInt32.self)
            case nil:
                // Unknown tags are skipped so that a header can be added without a new version.
                continue
            }
        }
        guard let method else { throw .malformedFrame("request without method header") }
        return WireRequest(
            method: method,
            timeoutMilliseconds: timeout,
            requestID: requestID,
            traceParent: traceParent,
            credit: credit,
            payload: body.readSlice(length: body.readableBytes)!
        )
    }
}

extension ByteBuffer {
    /// Writes a `str16` of at most `maximum` bytes. Never traps: a longer string is cut on a character
    /// boundary (see ``WireLimits``), so what is built from outside data (an error message quoting a
    /// method) can always be encoded, and the result is still valid UTF-8.
    mutating func writeShortString(_ string: String, maximum: Int) {
        let lengthIndex = self.writerIndex
        self.writeInteger(UInt16(0))
        let written = self.writeClampedUTF8(string, maximum: min(maximum, WireLimits.maximumShortFieldLength))
        self.setInteger(UInt16(written), at: lengthIndex)
    }

    /// Writes at most `maximum` bytes of `string`'s UTF-8, cut before a partial scalar; returns the count.
    @discardableResult
    mutating func writeClampedUTF8(_ string: String, maximum: Int) -> Int {
        let utf8 = string.utf8
        guard utf8.count > maximum else { return self.writeString(string) }
        var end = utf8.index(utf8.startIndex, offsetBy: maximum)
        while end > utf8.startIndex, UTF8.isContinuation(utf8[end]) {
            end = utf8.index(before: end)
        }
        return self.writeBytes(utf8[..<end])
    }

    /// Writes a `bytes16`, at most 65,535 bytes of it.
    mutating func writeShortBytes(_ bytes: [UInt8]) {
        let clamped = bytes.prefix(WireLimits.maximumShortFieldLength)
        self.writeInteger(UInt16(clamped.count))
        self.writeBytes(clamped)
    }

    /// Writes a `list8`, at most 255 entries of it.
    mutating func writeByteList(_ bytes: [UInt8]) {
        let clamped = bytes.prefix(WireLimits.maximumByteListCount)
        self.writeInteger(UInt8(clamped.count))
        self.writeBytes(clamped)
    }

    /// Writes a request header whose value is a name (cut at ``WireLimits/maximumNameLength``).
    mutating func writeHeader(_ tag: WireRequestHeaderTag, _ value: String) {
        self.writeInteger(tag.rawValue)
        let lengthIndex = self.writerIndex
        self.writeInteger(UInt16(0))
        let written = self.writeClampedUTF8(value, maximum: WireLimits.maximumNameLength)
        self.setInteger(UInt16(written), at: lengthIndex)
    }

    mutating func readWireInteger<T: FixedWidthInteger>(as: T.Type, _ what: String) throws(WireError) -> T {
        guard let value = self.readInteger(as: T.self) else {
            throw .malformedFrame("\(what) runs past the frame")
        }
        return value
    }

    mutating func readShortBytes(_ what: String) throws(WireError) -> [UInt8] {
        let length = try self.readWireInteger(as: UInt16.self, what)
        guard let bytes = self.readBytes(length: Int(length)) else {
            throw .malformedFrame("\(what) runs past the frame")
        }
        return bytes
    }

    mutating func readByteList(_ what: String) throws(WireError) -> [UInt8] {
        let count = try self.readWireInteger(as: UInt8.self, what)
        guard let bytes = self.readBytes(length: Int(count)) else {
            throw .malformedFrame("\(what) runs past the frame")
        }
        return bytes
    }

    mutating func readShortString(_ what: String, maximum: Int) throws(WireError) -> String {
        let length = try self.readWireInteger(as: UInt16.self, what)
        guard var slice = self.readSlice(length: Int(length)) else {
            throw .malformedFrame("\(what) runs past the frame")
        }
        return try slice.readRemainingString(what, maximum: maximum)
    }

    /// The rest of the buffer as a string of at most `maximum` bytes.
    mutating func readRemainingString(_ what: String, maximum: Int) throws(WireError) -> String {
        guard self.readableBytes <= maximum else {
            throw .malformedFrame("\(what) is longer than \(maximum) bytes")
        }
        do {
            return try self.readUTF8ValidatedString(length: self.readableBytes) ?? ""
        } catch {
            throw .malformedFrame("\(what) is not valid UTF-8")
        }
    }
}
