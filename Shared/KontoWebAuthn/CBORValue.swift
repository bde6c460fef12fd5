/// A CBOR data item (RFC 8949) as WebAuthn uses them: attestation objects and COSE keys. Definite lengths only
/// (WebAuthn's CTAP2 canonical form has no indefinite ones).
public indirect enum CBORValue: Sendable, Equatable {
    case unsigned(UInt64)
    /// -1 - n, stored as n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// In the order encoded (keys are compared as values; a key repeated is an error).
    case map([CBORMapEntry])
    case tagged(UInt64, CBORValue)
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    /// The value of an integer item that fits an Int (COSE labels and algorithms).
    public var int: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value < UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }

    /// A map's value for an integer key.
    public subscript(key: Int) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key.int == key }?.value
    }

    /// A map's value for a text key.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

public struct CBORMapEntry: Sendable, Equatable {
    public var key: CBORValue
    public var value: CBORValue
}
