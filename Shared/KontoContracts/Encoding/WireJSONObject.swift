import KontoModel
import NIOCore

/// The members of a JSON object payload, read with the direct parser, for ``KontoWire/WireJSONCodable`` types.
///
/// Typed accessors refuse what `JSONDecoder` refuses for the same Swift type (a missing required
/// member, a wrong kind); members nobody asks for are ignored, as `JSONDecoder` ignores them.
struct WireJSONObject {
    /// A member is missing or of the wrong kind; names the member, never its value.
    struct MemberError: Error, CustomStringConvertible {
        let member: String
        var description: String { "payload member \"\(member)\" is missing or has the wrong type" }
    }

    private let members: [String: AccountValue]

    init(_ bytes: ByteBufferView) throws {
        self.members = try AccountValue.parseObject(json: bytes)
    }

    func string(_ member: String) throws(MemberError) -> String {
        guard case .string(let value) = members[member] else { throw MemberError(member: member) }
        return value
    }

    func int64(_ member: String) throws(MemberError) -> Int64 {
        switch members[member] {
        case .integer(let value): return value
        case .double(let value):
            guard let value = Int64(exactly: value) else { throw MemberError(member: member) }
            return value
        default: throw MemberError(member: member)
        }
    }

    func object(_ member: String) throws(MemberError) -> [String: AccountValue] {
        guard case .object(let value) = members[member] else { throw MemberError(member: member) }
        return value
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalStrings(_ member: String) throws(MemberError) -> [String]? {
        switch members[member] {
        case nil, .null: return nil
        case .array(let elements):
            return try elements.map { element throws(MemberError) in
                guard case .string(let value) = element else { throw MemberError(member: member) }
                return value
            }
        default: throw MemberError(member: member)
        }
    }
}
