import KontoWire
import NIOCore

/// Encodes frames the way the channel's encoder does and checks what a peer would read back.
public enum FrameRoundTrip {
    /// Encodes `frame`, checks `encodedSize` and that the bytes decode to exactly the same frame, and
    /// returns the bytes.
    ///
    /// With `allowingClamps`, fields over their ``WireLimits`` may come back cut as the encoder cuts
    /// them (names at 255 bytes, text and `bytes16` at 65,535, lists at 255 entries), which is how
    /// outside data such as an error message quoting a payload is meant to go out. Without it (frames
    /// a decoder accepted, requests a client writes, frames the server machine makes) any change is a
    /// finding: a cut method name would call another method.
    @discardableResult
    public static func encode(_ frame: WireFrame, allowingClamps: Bool = false) -> ByteBuffer {
        var encoded = ByteBuffer()
        WireFrameCodec.encode(frame, into: &encoded)
        precondition(WireFrameCodec.encodedSize(frame) == encoded.readableBytes, "encodedSize disagrees with encode for a \(frame.kind) frame")
        var reading = encoded
        let decoded: WireFrame?
        do {
            decoded = try WireFrameCodec.decode(&reading, maximumLength: Int(UInt32.max))
        } catch {
            fatalError("an encoded \(frame.kind) frame does not decode: \(error)")
        }
        guard let decoded, reading.readableBytes == 0 else {
            fatalError("an encoded \(frame.kind) frame is not exactly one frame")
        }
        if decoded != frame {
            precondition(allowingClamps, "round trip changed a \(frame.kind) frame (id \(frame.correlationID))")
            precondition(Self.isClamped(decoded, from: frame), "round trip changed a \(frame.kind) frame beyond clamping (id \(frame.correlationID))")
        }
        return encoded
    }

    /// Encodes and decodes a frame a peer sends (fields over the limits cut, as its encoder would),
    /// then returns what the receiver sees.
    public static func transmit(_ frame: WireFrame, maximumLength: Int) throws(WireError) -> WireFrame {
        var bytes = Self.encode(frame, allowingClamps: true)
        guard let received = try WireFrameCodec.decode(&bytes, maximumLength: maximumLength) else {
            fatalError("an encoded frame is incomplete")
        }
        return received
    }

    /// The size of `frame` as a receiver's decoder limits it: the length prefix's value.
    public static func length(_ frame: WireFrame) -> Int {
        WireFrameCodec.encodedSize(frame) - WireFrame.lengthFieldSize
    }

    private static let name = WireLimits.maximumNameLength
    private static let text = WireLimits.maximumShortFieldLength

    /// Whether `decoded` equals `original` except for fields over their limit, cut as the encoder cuts.
    static func isClamped(_ decoded: WireFrame, from original: WireFrame) -> Bool {
        guard decoded.version == original.version, decoded.flags == original.flags,
              decoded.correlationID == original.correlationID
        else { return false }
        switch (decoded.message, original.message) {
        case (.hello(.clientHello(let d)), .hello(.clientHello(let o))):
            return clamped(d.serviceName, o.serviceName, name)
                && clamped(d.supportedVersions, o.supportedVersions, WireLimits.maximumByteListCount)
                && clamped(d.mac, o.mac, text)
        case (.hello(.challenge(let d)), .hello(.challenge(let o))):
            return clamped(d.nonce, o.nonce, text)
                && clamped(d.supportedVersions, o.supportedVersions, WireLimits.maximumByteListCount)
        case (.welcome(let d), .welcome(let o)):
            return d.version == o.version && clamped(d.serverName, o.serverName, name)
                && d.methods.count == min(o.methods.count, WireLimits.maximumMethodCount)
                && zip(d.methods, o.methods).allSatisfy { clamped($0, $1, name) }
                && d.maxInFlight == o.maxInFlight && d.maxFrameLength == o.maxFrameLength
        case (.request(let d), .request(let o)):
            return clamped(d.method, o.method, name) && d.timeoutMilliseconds == o.timeoutMilliseconds
                && clamped(d.requestID, o.requestID, name) && clamped(d.traceParent, o.traceParent, name) && d.credit == o.credit
                && d.payload == o.payload
        case (.error(let d), .error(let o)):
            return clamped(d.code.rawValue, o.code.rawValue, name) && clamped(d.message, o.message, text)
                && d.isRetryable == o.isRetryable && d.details == o.details
        case (.event(let d), .event(let o)):
            return d.subscriptionID == o.subscriptionID && clamped(d.topic, o.topic, name) && d.payload == o.payload
        case (.ack(let d), .ack(let o)):
            switch (d.disposition, o.disposition) {
            case (.processed, .processed): return true
            case (.retry(let d), .retry(let o)), (.reject(let d), .reject(let o)): return clamped(d, o, text)
            default: return false
            }
        case (.goaway(let d), .goaway(let o)):
            return d.lastCorrelationID == o.lastCorrelationID && clamped(d.reason, o.reason, text)
        default:
            return false
        }
    }

    /// Unchanged, or a string over `limit` cut to a prefix within it, at most a partial scalar short.
    private static func clamped(_ decoded: String?, _ original: String?, _ limit: Int) -> Bool {
        guard let decoded, let original else { return decoded == nil && original == nil }
        if decoded == original { return true }
        let count = decoded.utf8.count
        return original.utf8.count > limit && count <= limit && count > limit - 4
            && original.utf8.starts(with: decoded.utf8)
    }

    private static func clamped(_ decoded: [UInt8], _ original: [UInt8], _ limit: Int) -> Bool {
        decoded == original || (original.count > limit && decoded == Array(original.prefix(limit)))
    }
}
