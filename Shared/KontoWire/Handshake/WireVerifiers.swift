/// The keys a server checks its callers' handshakes with: for each caller it accepts, that caller's verifier at this
/// server (``WireSecret/Kind/verifier(caller:server:)``), one or two of them while a caller's key is rotated. A
/// server given only verifiers holds nothing that lets it call another server as anyone (docs/PROTOCOL.md, "Keys").
///
/// For development and tests a server may derive them instead, from the root secret (any caller) or from one
/// caller's key (that caller only).
public struct WireVerifiers: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case deriving(WireSecret)
        case listed([String: [WireSecret]])
    }
    let storage: Storage

    /// Derives each caller's verifier from `secret` (the root: every caller; a caller's key: that caller; a
    /// verifier: that one alone).
    public init(_ secret: WireSecret) {
        switch secret.kind {
        case .verifier(let caller, _): storage = .listed([caller: [secret]])
        default: storage = .deriving(secret)
        }
    }

    /// Exactly these verifiers (each of kind ``WireSecret/Kind/verifier(caller:server:)``).
    public init(verifiers: [WireSecret]) {
        var byCaller: [String: [WireSecret]] = [:]
        for verifier in verifiers {
            guard case .verifier(let caller, _) = verifier.kind else { continue }
            byCaller[caller, default: []].append(verifier)
        }
        storage = .listed(byCaller)
    }

    /// The keys a hello from `caller` to `server` may be proven under; empty when the caller is not accepted.
    public func candidates(caller: String, server: String) -> [WireSecret] {
        switch storage {
        case .deriving(let secret):
            if case .caller(let name) = secret.kind, name != caller { return [] }
            return [secret.proofKey(caller: caller, server: server)]
        case .listed(let byCaller):
            return (byCaller[caller] ?? []).filter { $0.kind == .verifier(caller: caller, server: server) }
        }
    }

    /// The callers listed, sorted; nil when the verifiers are derived from a root.
    public var callers: [String]? {
        switch storage {
        case .deriving(let secret): secret.peer.map { [$0] }
        case .listed(let byCaller): byCaller.keys.sorted()
        }
    }

    /// Whether this derives from the root secret (a development set-up: the process could speak as anyone).
    public var holdsRoot: Bool {
        if case .deriving(let secret) = storage { return secret.kind == .root }
        return false
    }

    /// `caller:HEX` entries separated by commas or white space, each HEX 64 hexadecimal digits (a caller may be listed
    /// twice while its key is rotated), as `KONTO_<SERVICE>_WIRE_VERIFIERS` gives them; the problem with the first
    /// entry that is not one, never the key itself.
    public static func parse(_ text: String, server: String) -> Result<WireVerifiers, WireVerifiersError> {
        var verifiers: [WireSecret] = []
        let entries = text.split(whereSeparator: { $0 == "," || $0.isWhitespace })
        guard !entries.isEmpty else { return .failure(WireVerifiersError(problem: "lists no caller")) }
        for (index, entry) in entries.enumerated() {
            guard let colon = entry.lastIndex(of: ":") else {
                return .failure(WireVerifiersError(problem: "entry \(index + 1) is not CALLER:KEY"))
            }
            let caller = String(entry[..<colon])
            guard !caller.isEmpty, caller.utf8.count <= 64,
                  caller.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else {
                return .failure(WireVerifiersError(problem: "entry \(index + 1) names no caller (lower-case letters, digits, - and _)"))
            }
            guard let bytes = WireSecret.hexBytes(String(entry[entry.index(after: colon)...])), bytes.count == 32 else {
                return .failure(WireVerifiersError(problem: "entry \(index + 1) (\(caller)) is not 64 hexadecimal digits"))
            }
            verifiers.append(WireSecret(verifier: bytes, caller: caller, server: server))
        }
        return .success(WireVerifiers(verifiers: verifiers))
    }

    public var description: String {
        switch storage {
        case .deriving(let secret): "WireVerifiers(deriving from \(secret))"
        case .listed(let byCaller): "WireVerifiers(\(byCaller.keys.sorted().joined(separator: ", ")), <redacted>)"
        }
    }
}

/// Why a verifier list was refused; never shows a key.
public struct WireVerifiersError: Error, Sendable, CustomStringConvertible {
    public var problem: String
    public var description: String { problem }
}
