import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The OpenID Provider's clients, listed, registered, changed, given a new secret and removed at run time
/// (docs/OIDC.md, "Clients through the admin API"). Identity checks the key's `clients:write`, audits the call and
/// keeps the clients; the gateway only translates.
extension GatewayAPI {
    func adminListOpenIDClients(_ input: Operations.AdminListOpenIDClients.Input) async throws -> Operations.AdminListOpenIDClients.Output {
        let found = try await upstreams.identity(IdentityContract.openIDClients, IdentityOpenIDClientsRequest(operatorCall: Self.operatorCall()))
        return .ok(.init(body: .json(.init(clients: found.clients.map(Self.client)))))
    }

    func adminCreateOpenIDClient(_ input: Operations.AdminCreateOpenIDClient.Input) async throws -> Operations.AdminCreateOpenIDClient.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        guard let id = body.id else { throw GatewayProblem.malformed("id is required: the client's id, as its application will send it.") }
        let saved = try await upstreams.identity(IdentityContract.createOpenIDClient, IdentityOpenIDClientRequest(
            operatorCall: Self.operatorCall(), clientId: id, settings: Self.settings(body)
        ))
        return .created(.init(body: .json(.init(client: Self.client(saved.client), secret: saved.secret?.value))))
    }

    func adminUpdateOpenIDClient(_ input: Operations.AdminUpdateOpenIDClient.Input) async throws -> Operations.AdminUpdateOpenIDClient.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        if let id = body.id, id != input.path.clientId { throw GatewayProblem.malformed("id must be the path's client id (a client's id never changes).") }
        let updated = try await upstreams.identity(IdentityContract.updateOpenIDClient, IdentityOpenIDClientRequest(
            operatorCall: Self.operatorCall(), clientId: input.path.clientId, settings: Self.settings(body)
        ))
        return .ok(.init(body: .json(Self.client(updated))))
    }

    func adminRotateOpenIDClientSecret(_ input: Operations.AdminRotateOpenIDClientSecret.Input) async throws -> Operations.AdminRotateOpenIDClientSecret.Output {
        var keep = 0
        if case .json(let body)? = input.body { keep = body.keepPreviousSeconds ?? 0 }
        let saved = try await upstreams.identity(IdentityContract.rotateOpenIDClientSecret, IdentityRotateOpenIDClientSecretRequest(
            operatorCall: Self.operatorCall(), clientId: input.path.clientId, keepPreviousSeconds: keep
        ))
        return .ok(.init(body: .json(.init(client: Self.client(saved.client), secret: saved.secret?.value))))
    }

    func adminRemoveOpenIDClient(_ input: Operations.AdminRemoveOpenIDClient.Input) async throws -> Operations.AdminRemoveOpenIDClient.Output {
        let removed = try await upstreams.identity(IdentityContract.removeOpenIDClient, IdentityOpenIDClientIdRequest(
            operatorCall: Self.operatorCall(), clientId: input.path.clientId
        ))
        return .ok(.init(body: .json(.init(grantsEnded: removed.grantsEnded, consentsRemoved: removed.consentsRemoved))))
    }

    private static func settings(_ body: Components.Schemas.OpenIDClientSettings) -> IdentityOpenIDClientSettings {
        IdentityOpenIDClientSettings(
            name: body.name, type: body._type.rawValue, authentication: body.authentication?.rawValue,
            jwks: body.jwks.map { $0.keys.map { IdentityJSONWebKey(kty: $0.kty.rawValue, kid: $0.kid, use: $0.use ?? "sig", alg: $0.alg.rawValue, crv: $0.crv, x: $0.x, y: $0.y, n: $0.n, e: $0.e) } },
            redirectURIs: body.redirectUris, postLogoutRedirectURIs: body.postLogoutRedirectUris ?? [], scopes: body.scopes ?? ["openid"],
            firstParty: body.firstParty ?? false, idTokenAlgorithm: body.idTokenAlgorithm?.rawValue ?? "ES256", sectorIdentifier: body.sectorIdentifier
        )
    }

    private static func client(_ info: IdentityOpenIDClientInfo) -> Components.Schemas.OpenIDClient {
        let settings = info.settings
        return .init(
            id: info.id, source: info.source == .file ? .file : .api, name: settings.name, _type: settings.type == "public" ? ._public : .confidential,
            authentication: settings.authentication,
            jwks: settings.jwks.map { .init(keys: $0.map { key in
                .init(kty: key.kty == "RSA" ? .rsa : .ec, kid: key.kid, alg: key.alg == "RS256" ? .rs256 : .es256, use: key.use, crv: key.crv, x: key.x, y: key.y, n: key.n, e: key.e)
            }) },
            redirectUris: settings.redirectURIs, postLogoutRedirectUris: settings.postLogoutRedirectURIs, scopes: settings.scopes, firstParty: settings.firstParty,
            idTokenAlgorithm: settings.idTokenAlgorithm, sectorIdentifier: settings.sectorIdentifier, createdAt: info.createdAt?.date, updatedAt: info.updatedAt?.date,
            secretCreatedAt: info.secretCreatedAt?.date, previousSecretExpiresAt: info.previousSecretExpiresAt?.date
        )
    }
}
