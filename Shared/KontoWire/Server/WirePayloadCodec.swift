#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// JSON in request and response payloads, for the typed API: a type's own reader and writer when
/// it has them (``WireJSONCodable``), Foundation's coders otherwise.
enum WirePayloadCodec {
    /// - Parameter userInfo: the method's ``WireMethod/codingUserInfo``; with any, Foundation's encoder is used,
    ///   since only it passes them on to the value.
    static func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: Bool] = [:]) throws -> ByteBuffer {
        do {
            if userInfo.isEmpty, let value = value as? any WireJSONCodable {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(256)
                try value.writeWireJSON(into: &bytes)
                return ByteBuffer(bytes: bytes)
            }
            let encoder = JSONEncoder()
            for (key, flag) in userInfo {
                encoder.userInfo[key] = flag
            }
            return ByteBuffer(bytes: try encoder.encode(value))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "cannot encode \(T.self) as JSON")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer, userInfo: [CodingUserInfoKey: Bool] = [:]) throws -> T {
        do {
            if userInfo.isEmpty, let fast = T.self as? any WireJSONCodable.Type, let value = try fast.init(wireJSON: buffer.readableBytesView) as? T {
                return value
            }
            let decoder = JSONDecoder()
            for (key, flag) in userInfo {
                decoder.userInfo[key] = flag
            }
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw WireError(code: WireError.Code.badPayload, message: "payload is not a valid \(T.self)")
        }
    }
}
