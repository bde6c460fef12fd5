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

    /// A nested object's members, as ``object(_:)`` or ``optionalObject(_:)`` read them.
    init(members: [String: AccountValue]) {
        self.members = members
    }

    func string(_ member: String) throws(MemberError) -> String {
        guard case .string(let value) = members[member] else { throw MemberError(member: member) }
        return value
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalString(_ member: String) throws(MemberError) -> String? {
        switch members[member] {
        case nil, .null: return nil
        case .string(let value): return value
        default: throw MemberError(member: member)
        }
    }

    func bool(_ member: String) throws(MemberError) -> Bool {
        guard case .bool(let value) = members[member] else { throw MemberError(member: member) }
        return value
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalBool(_ member: String) throws(MemberError) -> Bool? {
        switch members[member] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw MemberError(member: member)
        }
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalInt64(_ member: String) throws(MemberError) -> Int64? {
        switch members[member] {
        case nil, .null: return nil
        default: return try int64(member)
        }
    }

    /// A ``Timestamp`` as its `Codable` form reads it: an ISO 8601 string.
    func timestamp(_ member: String) throws(MemberError) -> Timestamp {
        guard let timestamp = Timestamp(iso8601: try string(member)) else { throw MemberError(member: member) }
        return timestamp
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalTimestamp(_ member: String) throws(MemberError) -> Timestamp? {
        guard let text = try optionalString(member) else { return nil }
        guard let timestamp = Timestamp(iso8601: text) else { throw MemberError(member: member) }
        return timestamp
    }

    /// `nil` when absent or `null`, as `decodeIfPresent` reads it.
    func optionalObject(_ member: String) throws(MemberError) -> WireJSONObject? {
        switch members[member] {
        case nil, .null: return nil
        case .object(let value): return WireJSONObject(members: value)
        default: throw MemberError(member: member)
        }
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
