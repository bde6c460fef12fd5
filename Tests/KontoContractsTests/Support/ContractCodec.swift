import Foundation
import KontoContracts
import KontoTestSupport
import KontoWire
import Testing

/// Decodes a recorded payload with a method's Swift type and encodes it again, canonically, as the wire client does:
/// requests with the method's coding flags (secrets only where the contract declares them), responses without.
struct ContractCodec: Sendable {
    var request: @Sendable (String) throws -> String
    var response: @Sendable (String) throws -> String

    static func entry<Request, Response>(_ method: WireMethod<Request, Response>) -> (String, ContractCodec) {
        (method.name, ContractCodec(
            request: { try reencode($0, as: Request.self, userInfo: method.codingUserInfo) },
            response: { try reencode($0, as: Response.self, userInfo: [:]) }
        ))
    }

    /// A subscription's request, and its recorded events as `[{"topic", "event"}]`.
    static func entry<Request, Event>(subscription method: WireSubscriptionMethod<Request, Event>) -> (String, ContractCodec) {
        (method.name, ContractCodec(
            request: { try reencode($0, as: Request.self, userInfo: [:]) },
            response: { try reencode($0, as: [Delivered<Event>].self, userInfo: [:]) }
        ))
    }

    /// One delivered event as a subscription example records it.
    struct Delivered<Event: Codable & Sendable>: Codable {
        var topic: String
        var event: Event
    }

    static func reencode<T: Codable>(_ json: String, as type: T.Type, userInfo: [CodingUserInfoKey: Bool]) throws -> String {
        let value = try JSONDecoder().decode(T.self, from: Data(json.utf8))
        let encoder = JSONEncoder()
        for (key, flag) in userInfo {
            encoder.userInfo[key] = flag
        }
        return try ContractExample.canonical(json: Array(try encoder.encode(value)))
    }
}

extension ContractExample: CustomTestStringConvertible {
    public var testDescription: String { label }
}
