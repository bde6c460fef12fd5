import Foundation
import OpenAPIRuntime

/// An application with access to the account through Konto as an OpenID Provider: the owner's consent, the sign-ins
/// still holding tokens, or both.
public struct KontoApplication: Sendable, Equatable {
    public var clientId: String
    /// The name the deployment registered it under.
    public var name: String
    public var scopes: [String]
    /// When the owner consented; nil for the deployment's own applications, which ask none.
    public var consentedAt: Date?
    /// Its sign-ins still holding tokens.
    public var grants: Int
    public var lastUsedAt: Date?
}

extension KontoClient {
    /// The applications with access to the account (`GET /v1/account/applications`).
    public func applications() async throws -> [KontoApplication] {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.listApplications() }) {
        case .ok(let ok):
            return try ok.body.json.applications.map {
                KontoApplication(clientId: $0.clientId, name: $0.name, scopes: $0.scopes, consentedAt: $0.consentedAt, grants: $0.grants, lastUsedAt: $0.lastUsedAt)
            }
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Takes an application's access away: its consent and every token it holds end at once; its next sign-in asks for
    /// consent again. Throws `account.applicationNotFound` when it has no access.
    public func revokeApplication(clientId: String) async throws {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.revokeApplication(path: .init(clientId: clientId)) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }
}
