import NIOCore

/// A payload type that reads and writes its own JSON, for the methods that carry most of the traffic.
///
/// Foundation's `JSONEncoder` and `JSONDecoder` cost more than everything else in a small call
/// (generic containers, metadata lookups, a `Data` copy each way), so ``WirePayloadCodec`` uses
/// these instead when a type offers them. The bytes are JSON with the same meaning as the type's
/// `Codable` form, and both sides accept each other's output, so peers may use either.
public protocol WireJSONCodable: Codable, Sendable {
    /// Reads the JSON form, refusing what `JSONDecoder` would refuse for this type; unknown members are ignored.
    init(wireJSON bytes: ByteBufferView) throws

    /// Appends the JSON form.
    func writeWireJSON(into output: inout [UInt8]) throws
}
