/// Which keys a storage backend can hold; the rest go to an external storage provider.
public enum SupportedKeys: Sendable, Equatable {
    case arbitrary
    case exactly(Set<String>)

    public func contains(_ identifier: String) -> Bool {
        switch self {
        case .arbitrary: true
        case let .exactly(identifiers): identifiers.contains(identifier)
        }
    }
}

/// `"arbitrary"` or a sorted list of identifiers.
extension SupportedKeys: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let identifiers = try? container.decode([String].self) {
            self = .exactly(Set(identifiers))
        } else if try container.decode(String.self) == "arbitrary" {
            self = .arbitrary
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected \"arbitrary\" or a list of key identifiers.")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .arbitrary: try container.encode("arbitrary")
        case let .exactly(identifiers): try container.encode(identifiers.sorted())
        }
    }
}
