#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// JSON in request and response payloads, for the typed API.
enum WirePayloadCodec {
    static func encode<T: Encodable>(_ value: T) throws -> ByteBuffer {
        do {
            return ByteBuffer(bytes: try JSONEncoder().encode(value))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "cannot encode \(T.self) as JSON")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "payload is not a valid \(T.self)")
        }
    }
}
