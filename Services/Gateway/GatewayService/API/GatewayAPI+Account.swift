import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

extension GatewayAPI {
    func getAccount(_ input: Operations.GetAccount.Input) async throws -> Operations.GetAccount.Output {
        if let presented = RequestScope.scope.bearerToken, Self.isAccessToken(presented) {
            return try await getAccount(accessToken: presented)
        }
        let (_, session) = try await authenticate()
        if let cached = cache.account(session.accountId), cached.matches(session) {
            metrics.cache("account", hit: true)
            return .ok(.init(headers: .init(eTag: Self.etag(cached.version)), body: .json(cached.account)))
        }
        let ticket = cache.ticket()
        let record: ProfileRecord
        do {
            record = try await upstreams.profile(ProfileContract.load, ProfileLoadRequest(accountId: session.accountId))
        } catch {
            // An anonymous account has no details until it signs up (not cached: its sign-up creates them).
            guard session.account.isAnonymous, error.code == AccountError.Code.notFound else { throw error }
            let empty = account(profile: nil, session: session)
            return .ok(.init(headers: .init(eTag: Self.etag(empty.version)), body: .json(empty)))
        }
        let account = account(profile: record, session: session)
        if let ticket {
            metrics.cache("account", hit: false)
            cache.store(try AccountCache.CachedAccount(account: account, version: record.version, facts: session.account), ticket: ticket)
        }
        return .ok(.init(headers: .init(eTag: Self.etag(record.version)), body: .json(account)))
    }

    /// The account for an application's access token with `profile` and `email` (the document holds the details and
    /// the userId): read from Profile each time, not cached (the cache is keyed by sessions). It names the account by
    /// the subject the client knows (a pairwise client's own), never the public id every other client sees, and
    /// leaves out when it was made (to the millisecond, as telling as an id).
    private func getAccount(accessToken: String) async throws -> Operations.GetAccount.Output {
        let (facts, subject) = try await accessGrant(accessToken, requiring: Self.accountReadingScopes)
        let record = try await upstreams.profile(ProfileContract.load, ProfileLoadRequest(accountId: facts.accountId))
        var named = facts
        named.accountId = subject
        named.createdAt = nil
        let account = assembler.account(named, profile: record)
        return .ok(.init(headers: .init(eTag: Self.etag(record.version)), body: .json(account)))
    }

    /// What an access token needs to read the account through the API.
    static let accountReadingScopes: Set<String> = ["profile", "email"]

    func modifyAccount(_ input: Operations.ModifyAccount.Input) async throws -> Operations.ModifyAccount.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let (token, session) = try await authenticate()
        try requireVerifiedAddress(session)
        let expectedVersion = try Self.expectedVersion(ifMatch: input.headers.ifMatch)
        let modifications = AccountModifications(set: body.set ?? AccountDetails(), remove: Set(body.remove ?? []))
        try Self.checkNoCredentials(modifications)
        try checkUserWritable(modifications)
        let request = ProfileModifyRequest(accountId: session.accountId, modifications: modifications, expectedVersion: expectedVersion)
        defer { cache.invalidate(accountId: session.accountId) }
        let record = try await upstreams.profile(ProfileContract.modify, request)
        // Where userIds are usernames, a new contact address gets its link at once. Best effort: past the hour's
        // allowance the change stands, and the owner asks again later.
        if accounts.userIdType == .username, case let .string(email)? = modifications.set.storedValues[EmailKey.identifier],
           email.lowercased() != session.account.verifiedEmail?.lowercased() {
            _ = try? await upstreams.identity(IdentityContract.requestEmailVerification, IdentitySessionRequest(token: token))
        }
        return .ok(.init(headers: .init(eTag: Self.etag(record.version)), body: .json(account(profile: record, session: session))))
    }

    func deleteAccount(_ input: Operations.DeleteAccount.Input) async throws -> Operations.DeleteAccount.Output {
        let body: Components.Schemas.AccountDeletion?
        switch input.body {
        case .json(let deletion): body = deletion
        case nil: body = nil
        }
        try await deleteAccount(currentPassword: body?.currentPassword.map(SecretString.init))
        return .noContent(.init())
    }

    /// Deletes the session's account; with `currentPassword`, whether or not the privileged window is open (one call,
    /// so a short window cannot close between a reauthentication and the deletion; the web console always asks).
    func deleteAccount(currentPassword: SecretString?) async throws {
        let deleted = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.delete, IdentityDeleteRequest(token: token, currentPassword: currentPassword))
        }
        await awaitCaches(deleted.eventIds)
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let ended = try await changingAccount { token, _ in
            let request = IdentityChangePasswordRequest(
                token: token,
                currentPassword: body.currentPassword.map(SecretString.init),
                newPassword: SecretString(body.newPassword)
            )
            return try await upstreams.identity(IdentityContract.changePassword, request)
        }
        await awaitCaches(ended.eventIds)
        return .ok(.init(body: .json(.init(sessionsEnded: ended.sessionsEnded))))
    }

    func changeUserId(_ input: Operations.ChangeUserId.Input) async throws -> Operations.ChangeUserId.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let changed = try await changingAccount { token, _ in
            let request = IdentityChangeUserIdRequest(token: token, userId: body.userId, currentPassword: body.currentPassword.map(SecretString.init))
            return try await upstreams.identity(IdentityContract.changeUserId, request)
        }
        await awaitCaches(changed.eventIds)
        return .noContent(.init())
    }

    func reauthenticate(_ input: Operations.Reauthenticate.Input) async throws -> Operations.Reauthenticate.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let privilege = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.reauthenticate, IdentityReauthenticateRequest(
                token: token,
                password: body.password.map(SecretString.init),
                code: body.code.map(SecretString.init),
                recoveryCode: body.recoveryCode.map(SecretString.init),
                credential: body.credential
            ))
        }
        // The presented token was replaced by a fresh one (an older Identity keeps it: then none is sent).
        return .ok(.init(body: .json(.init(
            privilegedUntil: privilege.privilegedUntil.date,
            session: privilege.session.map { .init(token: $0.token.value, expiresAt: $0.expiresAt.date) }
        ))))
    }

    func getSchema(_ input: Operations.GetSchema.Input) async throws -> Operations.GetSchema.Output {
        .ok(.init(body: .json(schema)))
    }

    /// The credentials change only through their own routes (which ask for the password again): Profile never
    /// holds them.
    static func checkNoCredentials(_ modifications: AccountModifications) throws(GatewayProblem) {
        let fields = modifications.credentialKeyErrors { key in
            key == AccountIdKey.identifier ? "The account identifier cannot be changed." : "Change this through its own route, which asks for the password."
        }
        guard !fields.isEmpty else { return }
        throw GatewayProblem(AccountError(code: .validationFailed, fields: fields))
    }

    /// Keys the operator's services write (`writableBy: server`) are refused here, the account holder's door to
    /// Profile; services write them over the wire.
    func checkUserWritable(_ modifications: AccountModifications) throws(GatewayProblem) {
        let fields = accounts.serverOwnedKeyErrors(Array(modifications.set.storedValues.keys) + Array(modifications.remove))
        guard !fields.isEmpty else { return }
        throw GatewayProblem(AccountError(code: .validationFailed, fields: fields))
    }

    /// The account as ``AccountAssembler`` puts it together from Profile's record and Identity's facts the session
    /// check answered with (the document's `Account` is the assembler's type).
    private func account(profile: ProfileRecord?, session: IdentitySessionInfo) -> AssembledAccount {
        assembler.account(session.account, profile: profile)
    }
}
