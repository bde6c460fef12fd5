import Foundation
import KontoContracts
import KontoModel

extension GatewayAPI {
    func listApplications(_ input: Operations.ListApplications.Input) async throws -> Operations.ListApplications.Output {
        let (token, _) = try await authenticate()
        let listed = try await upstreams.identity(IdentityContract.openIDApplications, IdentitySessionRequest(token: token))
        return .ok(.init(body: .json(.init(applications: listed.applications.map {
            .init(clientId: $0.clientId, name: $0.name, scopes: $0.scopes, consentedAt: $0.consentedAt?.date, grants: $0.grants, lastUsedAt: $0.lastUsedAt?.date)
        }))))
    }

    func revokeApplication(_ input: Operations.RevokeApplication.Input) async throws -> Operations.RevokeApplication.Output {
        let (token, _) = try await authenticate()
        _ = try await upstreams.identity(
            IdentityContract.revokeOpenIDApplication, IdentityRevokeApplicationRequest(token: token, clientId: input.path.clientId)
        )
        return .noContent(.init())
    }
}

/// The console's page of applications, through the API's own handlers.
extension GatewayOperations {
    package struct Application: Sendable, Equatable {
        package var clientId: String
        package var name: String
        package var scopes: [String]
        package var consentedAt: Date?
        package var lastUsedAt: Date?
    }

    package func applications() async throws -> [Application] {
        try await api.listApplications(.init()).ok.body.json.applications.map {
            Application(clientId: $0.clientId, name: $0.name, scopes: $0.scopes, consentedAt: $0.consentedAt, lastUsedAt: $0.lastUsedAt)
        }
    }

    package func revokeApplication(clientId: String) async throws {
        _ = try await api.revokeApplication(.init(path: .init(clientId: clientId))).noContent
    }
}
