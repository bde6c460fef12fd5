import Foundation
import KontoModel
import OpenAPIRuntime

extension KontoClient {
    /// A copy of everything Konto holds about the account (docs/API.md, "A copy of your data"), as one JSON document:
    /// its details, credential metadata, sessions, factors, linked identities, verification, mail preferences, and the
    /// audit entries and events still kept. Never a secret. Security-related: call ``reauthenticate(password:code:recoveryCode:passkeyCredentialJSON:)``
    /// first once the privileged window has shut (the request is refused with `account.reauthenticationRequired`).
    ///
    /// The document as the gateway answered it, re-encoded with sorted keys, indented: ready to save.
    public func exportAccount() async throws -> Data {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.exportAccount() }) {
        case .ok(let ok):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(date.formatted(.iso8601))
            }
            return try encoder.encode(try ok.body.json)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }
}
