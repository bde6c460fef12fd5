import Foundation
import KontoModel

/// What the gateway refused, as its `application/problem+json` said (a stable ``code``, per-field ``fields`` for
/// validation), or a failure to reach it or to read its answer.
public struct KontoClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The gateway's stable code (`account.wrongCredentials`, …), or one of ``Code``'s client-side codes.
    public var code: String
    /// The HTTP status; 0 when there was no answer.
    public var status: Int
    public var detail: String?
    /// Per-field problems (validation), in the gateway's order.
    public var fields: [AccountFieldError]
    /// Seconds to wait before trying again (429, 503).
    public var retryAfter: Int?
    /// The gateway's request id, to find the request in its logs.
    public var requestId: String?
    /// ``Code/secondFactorRequired``: the challenge to answer with ``KontoClient/completeLogIn(challenge:code:recoveryCode:)``.
    public var challenge: KontoSecondFactorChallenge?

    /// Codes the client itself gives.
    public enum Code {
        /// No session: sign up, log in or sign in anonymously first.
        public static let notSignedIn = "client.notSignedIn"
        /// The gateway could not be reached.
        public static let unreachable = "client.unreachable"
        /// The answer was not what the API promises.
        public static let unexpectedAnswer = "client.unexpectedAnswer"
        /// The session file could not be read or written, or may have been seen by others.
        public static let sessionFile = "client.sessionFile"
        /// The keychain refused to read, keep or remove the session (``KeychainSessionStore``, Apple platforms).
        public static let keychain = "client.keychain"
        /// The password was right and the account has a second factor: the error's ``KontoClientError/challenge``
        /// is answered with a code (``KontoClient/completeLogIn(challenge:code:recoveryCode:)``).
        public static let secondFactorRequired = "client.secondFactorRequired"
        /// What the caller gave cannot be sent (a passkey credential that is not WebAuthn's JSON form).
        public static let invalidInput = "client.invalidInput"
    }

    public init(code: String, status: Int, detail: String? = nil, fields: [AccountFieldError] = [], retryAfter: Int? = nil, requestId: String? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.fields = fields
        self.retryAfter = retryAfter
        self.requestId = requestId
    }

    public var description: String {
        var text = code + (status > 0 ? " (\(status))" : "")
        if let detail { text += ": \(detail)" }
        for field in fields { text += "\n  \(field.key): \(field.message)" }
        return text
    }
}

/// What an app shows: the gateway's own words for a refusal (its problem's `detail`), else a sentence for the code; the
/// code itself is the failure's reason, for logs and support.
extension KontoClientError: LocalizedError {
    public var errorDescription: String? {
        if let detail, !detail.isEmpty { return detail }
        switch code {
        case Code.notSignedIn: return "You are not signed in."
        case Code.unreachable: return "The account service cannot be reached. Check the connection and try again."
        case Code.unexpectedAnswer: return "The account service gave an answer this app does not understand."
        case Code.sessionFile, Code.keychain: return "The saved sign-in could not be read or kept."
        case Code.secondFactorRequired: return "Enter a code from the authenticator app, or a recovery code."
        case Code.invalidInput: return "What was entered cannot be sent."
        default: return "The account service refused the request (\(code))."
        }
    }

    public var failureReason: String? { code }

    public var recoverySuggestion: String? {
        retryAfter.map { $0 == 1 ? "Try again in a second." : "Try again in \($0) seconds." }
    }
}
