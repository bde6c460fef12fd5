import Foundation
import KontoErrors

/// One recorded exchange of a service's contract: a request and the response or error it gets.
///
/// Examples live as JSON files in `Tests/Contracts/<service>/`, named so that sorting them gives
/// the order in which a provider replays them against one fresh instance (later examples may
/// depend on earlier ones, e.g. load after create). Both sides check them: the provider answers
/// each request exactly as recorded, and the consumer's types encode the request and decode the
/// answer without losing or adding anything. Generated values (ids, tokens, timestamps) are recorded as
/// placeholders (``ContractPlaceholder``: `$match:KIND`, `$capture:NAME:KIND`, `$ref:NAME`).
public struct ContractExample: Sendable {
    public struct ExpectedError: Sendable, Equatable {
        public var code: KontoErrorCode
        public var retryable: Bool
        /// Canonical JSON of the error's details, or nil when it has none.
        public var details: String?

        public init(code: KontoErrorCode, retryable: Bool, details: String?) {
            self.code = code
            self.retryable = retryable
            self.details = details
        }
    }

    /// The file's name without `.json`, e.g. `01-signup`.
    public var name: String
    /// The contract's folder, e.g. `identity`.
    public var service: String
    public var description: String
    public var method: String
    /// Canonical JSON (sorted keys) of the request payload.
    public var request: String
    /// Canonical JSON of the response payload, when the exchange succeeds.
    public var response: String?
    public var error: ExpectedError?
    /// Set for a subscription (docs/PROTOCOL.md, "Subscriptions"): the credit it is opened with. Its `response` is
    /// then the events it delivers first, in order, as `[{"topic": …, "event": …}]`; its `error`, the error that
    /// ends it at once.
    public var subscriptionCredit: Int?
    /// False for a request the consumer's types cannot produce (e.g. one carrying a password, which
    /// `AccountDetails` never encodes), kept to prove the provider refuses it from any caller.
    public var consumerProduces: Bool
    /// A condition of the provider's surroundings the answer depends on (e.g. `storageDown`), which the provider test
    /// brings about before sending the request and ends afterwards (see ``ContractCondition``); nil for none.
    public var given: String?

    /// How differences name the example: `identity/01-signup (identity.signUp)`.
    public var label: String { "\(service)/\(name) (\(method))" }

    /// The examples of one service, in replay order, after checking that they were recorded for the contract's
    /// version and the wire protocol version spoken now (``ContractManifest``).
    /// - Parameter contractVersion: the contract's `version` (e.g. `IdentityContract.version`).
    public static func load(service: String, contractVersion: Int, filePath: String = #filePath) throws -> [ContractExample] {
        let directory = try contractsDirectory(from: filePath).appendingPathComponent(service)
        try ContractManifest.load(from: directory).check(service: service, contractVersion: contractVersion)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") && $0 != ContractManifest.fileName }
            .sorted()
        guard !files.isEmpty else { throw ContractExampleError("no examples in \(directory.path)") }
        return try files.map { try ContractExample(file: directory.appendingPathComponent($0)) }
    }

    init(file: URL) throws {
        name = file.deletingPathExtension().lastPathComponent
        service = file.deletingLastPathComponent().lastPathComponent
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        guard let example = object as? [String: Any] else { throw ContractExampleError("\(name): not a JSON object") }
        guard let method = example["method"] as? String else { throw ContractExampleError("\(name): no method") }
        guard let request = example["request"] else { throw ContractExampleError("\(name): no request") }
        self.method = method
        self.description = example["description"] as? String ?? name
        self.consumerProduces = example["consumerProduces"] as? Bool ?? true
        self.subscriptionCredit = example["credit"] as? Int
        self.given = example["given"] as? String
        self.request = try Self.canonical(request)
        self.response = try example["response"].map(Self.canonical)
        if let error = example["error"] as? [String: Any] {
            guard let code = error["code"] as? String else { throw ContractExampleError("\(name): error without code") }
            self.error = ExpectedError(
                code: KontoErrorCode(rawValue: code),
                retryable: error["retryable"] as? Bool ?? false,
                details: try error["details"].map(Self.canonical)
            )
        }
        guard (response == nil) != (self.error == nil) else {
            throw ContractExampleError("\(name): give exactly one of response and error")
        }
    }

    /// JSON with sorted keys and no insignificant white space, so equal documents compare equal as text.
    public static func canonical(_ object: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// The canonical form of a JSON document given as bytes.
    public static func canonical(json: some Collection<UInt8>) throws -> String {
        try canonical(JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed]))
    }

    /// `Tests/Contracts`, found by walking up from a test file.
    static func contractsDirectory(from filePath: String) throws -> URL {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("Contracts")
            if directory.lastPathComponent == "Tests", FileManager.default.fileExists(atPath: candidate.path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        throw ContractExampleError("Tests/Contracts not found above \(filePath)")
    }
}

public struct ContractExampleError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
