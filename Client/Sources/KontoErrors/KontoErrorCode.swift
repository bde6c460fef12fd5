/// A stable error code of the platform, such as `account.credentialsTaken` or `wire.timeout`: the one code type every
/// error of every layer carries (the wire's frames, the account model, the services, the gateway's problems).
///
/// Every code Konto knows is declared once, in `KontoErrorCode+Codes.swift`, and what it means beyond its name is
/// looked up from the code: its ``family`` (who answers with it) and whether it ``isRetryable``. What it means over
/// HTTP is the gateway's (its status table). A code no one here declares (a newer peer's) still travels and compares;
/// it is of the ``Family/unknown`` family and not retryable.
///
/// Like postgres-nio's `PSQLError.Code`, a struct rather than an enum: a peer may answer with a code this build does
/// not know, and it must still be carried through unchanged.
public struct KontoErrorCode: RawRepresentable, Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// By their text, for stable listings.
    public static func < (lhs: KontoErrorCode, rhs: KontoErrorCode) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Who answers with the code, from its prefix (`account.` …): the one place a code's family is worked out.
    public var family: Family {
        guard let dot = rawValue.utf8.firstIndex(of: UInt8(ascii: ".")) else { return .unknown }
        return Family(rawValue: String(rawValue[..<dot])) ?? .unknown
    }

    /// Whether the same request may succeed if sent again (later, or to another instance): the code's entry in
    /// ``retryableCodes``, the one table of it.
    public var isRetryable: Bool {
        Self.retryableCodes.contains(self)
    }

    /// Whether the code is one this build declares.
    public var isKnown: Bool {
        Self.all.contains(self)
    }

    /// The code's families.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        /// The wire layer's own: whether a service could be reached and understood, never what it answered.
        case wire
        /// The account model's (SpeziAccount's errors): the caller's request was refused.
        case account
        case identity
        /// The admin API's refusals (operator keys, scopes), answered by Identity.
        case admin
        case profile
        case notifications
        /// The gateway's refusals of an HTTP request as such (malformed, too large, rate limited).
        case request
        /// The gateway's own failures (a service it needs is unavailable).
        case gateway
        /// A code this build does not declare.
        case unknown
    }
}
