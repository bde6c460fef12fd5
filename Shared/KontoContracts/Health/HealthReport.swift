/// A service's readiness and the checks behind it.
public struct HealthReport: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        case ready
        case notReady
    }

    public struct Check: Codable, Sendable, Equatable {
        public var name: String
        public var status: Status
        /// Why a check failed; never a secret (no URLs with passwords).
        public var message: String?

        public init(name: String, status: Status, message: String? = nil) {
            self.name = name
            self.status = status
            self.message = message
        }
    }

    public var service: String
    public var checks: [Check]

    /// Ready when every check is.
    public var status: Status {
        checks.allSatisfy { $0.status == .ready } ? .ready : .notReady
    }

    public init(service: String, checks: [Check]) {
        self.service = service
        self.checks = checks
    }

    private enum CodingKeys: String, CodingKey {
        case service, status, checks
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        service = try container.decode(String.self, forKey: .service)
        checks = try container.decode([Check].self, forKey: .checks)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(service, forKey: .service)
        try container.encode(status, forKey: .status)
        try container.encode(checks, forKey: .checks)
    }
}
