import ArgumentParser
import KontoClient
import KontoModel

/// A failed command as one line for people (or a JSON object for scripts) and an exit status scripts can branch on.
struct CommandFailure: Error, Sendable {
    /// The exit statuses (`konto --help` lists them).
    enum Status: Int32, Sendable {
        /// The gateway refused (validation, wrong credentials, conflicts, throttling …).
        case refused = 1
        /// No session, or it has ended: log in.
        case notSignedIn = 2
        /// The gateway could not be reached or did not answer as the API promises.
        case unreachable = 3
        /// The command line or its input is unusable.
        case usage = 64
    }

    struct Document: Encodable {
        struct Problem: Encodable {
            var code: String
            var status: Int?
            var message: String
            var fields: [AccountFieldError]?
            var retryAfter: Int?
            var requestId: String?
        }
        var error: Problem
    }

    var status: Status
    var code: String
    var message: String
    var error: KontoClientError?
    /// The stored session is no longer any good and is forgotten.
    var endsSession = false

    init(_ error: any Error, gateway: String, passwordOnly: Bool = false) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as KontoClientError:
            self.error = error
            code = error.code
            switch error.code {
            case KontoClientError.Code.unreachable:
                status = .unreachable
                message = "the gateway is not reachable at \(gateway): is `konto stack` running?"
            case KontoClientError.Code.unexpectedAnswer:
                status = .unreachable
                message = "\(gateway) did not answer as a Konto gateway does (HTTP \(error.status)): is it one?"
            case KontoClientError.Code.notSignedIn:
                status = .notSignedIn
                message = "not signed in: `konto login USERID` or `konto signup USERID` first"
            case KontoClientError.Code.sessionFile:
                status = .usage
                message = error.detail ?? "the session file is unusable"
            case let code where code.hasPrefix("wire."):
                // The gateway is there but shutting down, or a service behind it is unavailable.
                status = .unreachable
                message = (error.detail ?? "the gateway or a service behind it is unavailable") + " (\(code))"
            case AccountError.Code.unauthenticated.rawValue:
                status = .notSignedIn
                endsSession = true
                message = "the session has ended: `konto login USERID` again"
            case AccountError.Code.wrongCredentials.rawValue:
                status = .refused
                message = passwordOnly ? "wrong password" : "wrong userId or password"
            case AccountError.Code.wrongSecondFactor.rawValue:
                status = .refused
                message = "wrong code, or one used already: enter the one the authenticator app shows now"
            case AccountError.Code.reauthenticationRequired.rawValue:
                status = .refused
                message = "this needs the password again (the privileged window has closed): `konto reauthenticate`, then this again"
            case AccountError.Code.secondFactorRequired.rawValue:
                status = .refused
                message = "this needs the second factor again (the account has one): `konto reauthenticate --code`, then this again"
            case AccountError.Code.factorLocked.rawValue:
                status = .refused
                message = "the authenticator app is locked after too many wrong codes: use a recovery code (`konto reauthenticate --code` takes one), a passkey in the web console, or reset the password through the mail"
            case AccountError.Code.invalidChallenge.rawValue:
                status = .refused
                message = "the login's second step has expired or was used: `konto login USERID` again"
            case AccountError.Code.emailNotVerified.rawValue:
                status = .refused
                message = "confirm the account's address first: open the link sent to it, or `konto verify-email` for a new one"
            default:
                status = .refused
                message = Self.describe(error)
            }
        case let error as KontoSchema.AssignmentError:
            status = .usage
            code = "client.usage"
            message = error.description
        default:
            status = .refused
            code = "client.failure"
            message = String(describing: error)
        }
    }

    init(usage message: String) {
        status = .usage
        code = "client.usage"
        self.message = message
    }

    var document: Document {
        Document(error: .init(
            code: code,
            status: error.flatMap { $0.status > 0 ? $0.status : nil },
            message: message,
            fields: error.flatMap { $0.fields.isEmpty ? nil : $0.fields },
            retryAfter: error?.retryAfter,
            requestId: error?.requestId
        ))
    }

    /// The gateway's detail with the code, and each field's problem on the same line.
    private static func describe(_ error: KontoClientError) -> String {
        var text = (error.detail ?? "refused") + " (\(error.code))"
        if !error.fields.isEmpty {
            text += ": " + error.fields.map { "\($0.key): \($0.message)" }.joined(separator: "; ")
        }
        if let retryAfter = error.retryAfter {
            text += "; try again in \(retryAfter) s"
        }
        return text
    }
}
