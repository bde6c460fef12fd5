#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// JSON in request and response payloads, for the typed API: a type's own reader and writer when
/// it has them (``WireJSONCodable``), Foundation's coders otherwise.
enum WirePayloadCodec {
    static func encode<T: Encodable>(_ value: T) throws -> ByteBuffer {
        do {
            if let value = value as? any WireJSONCodable {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(256)
                try value.writeWireJSON(into: &bytes)
                return ByteBuffer(bytes: bytes)
            }
            return ByteBuffer(bytes: try JSONEncoder().encode(value))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "cannot encode \(T.self) as JSON")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            if let fast = T.self as? any WireJSONCodable.Type, let value = try fast.init(wireJSON: buffer.readableBytesView) as? T {
                return value
            }
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "payload is not a valid \(T.self)")
        }
    }
}
