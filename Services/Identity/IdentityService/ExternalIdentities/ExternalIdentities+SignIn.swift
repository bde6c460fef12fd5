import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

extension ExternalIdentities {
    // MARK: Signing in

    /// Signs in with an external provider (docs/IDENTITY.md, "External identities").
    ///
    /// The provider's identity is verified first: a native ID token completely (``IdentityTokenVerifier``), or a web
    /// flow's code exchanged for one; each token's nonce works once. A linked identity signs in to its account (a
    /// second factor, when enrolled, is still asked for). An unknown one creates an account, or upgrades the anonymous
    /// session's: its userId is the provider's address where the deployment's userIds are addresses and that address
    /// is free (verified when the provider vouches for it), its name what the provider sent (Apple: beside the token,
    /// the first time only). Where required values are missing, the answer is a sign-up to complete with them
    /// (``IdentityExternalSignUp``). An address the provider vouches for that belongs to another account joins that
    /// account only where the operator turned `linkByVerifiedEmail` on and the account's address is verified too;
    /// otherwise the owner signs in there and links the provider.
    func externalLogin(_ request: IdentityExternalLoginRequest) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        let now = clock()
        let provider = try provider(named: request.provider)
        let clients = sessions.clientHashes(address: request.clientAddress, device: request.clientDevice)
        if let signUpToken = request.signUpToken {
            guard let pending = providerTokens.open(signUp: signUpToken.value), pending.identity.provider == provider.name, now < pending.expiresAt else {
                throw ServiceError(AccountError(code: .invalidIdentityToken, message: "The sign-up token is unknown or expired: sign in with the provider again."))
            }
            // Its identity has an account already (this sign-up, or another, completed): the token has done its work.
            if try await stored({ () async throws(IdentityStorageError) in
                try await storage.externalIdentity(provider: provider.name, subject: pending.identity.subject)
            }) != nil {
                throw ServiceError(AccountError(code: .invalidIdentityToken, message: "This sign-up was completed already: sign in with the provider again."))
            }
            return try await createExternalAccount(
                provider, verified: pending.identity, name: pending.name ?? request.name, refreshToken: pending.refreshToken,
                request: request, pendingId: pending.id, clients: clients, at: now
            )
        }
        let (verified, refreshToken) = try await verifiedIdentity(
            provider, idToken: request.idToken, nonce: request.nonce, code: request.authorizationCode,
            codeVerifier: request.codeVerifier, redirectURI: request.redirectURI, at: now
        )
        if let (identity, credential) = try await stored({ () async throws(IdentityStorageError) in
            try await storage.externalIdentity(provider: provider.name, subject: verified.subject)
        }) {
            return try await signIn(identity, credential: credential, verified: verified, refreshToken: refreshToken, clients: clients, at: now)
        }
        return try await createExternalAccount(
            provider, verified: verified, name: request.name, refreshToken: refreshToken, request: request, pendingId: nil, clients: clients, at: now
        )
    }

    /// A linked identity's sign-in: a privileged session (the provider just authenticated the user), or the second
    /// factor's challenge.
    func signIn(
        _ identity: StoredExternalIdentity, credential: StoredCredential, verified: VerifiedIdentity, refreshToken: ProviderTokenBox.RefreshToken?,
        clients: [[UInt8]], at now: Timestamp
    ) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        let sealed = refreshToken.map { providerTokens.seal($0, accountId: identity.accountId, identityId: identity.id) }
        try await stored { () async throws(IdentityStorageError) in
            try await storage.touchExternalIdentity(id: identity.id, email: verified.email, emailVerified: verified.emailVerified, at: now, sealedRefreshToken: sealed)
        }
        logger.info("signed in with an external identity", metadata: ["konto.account_id": "\(credential.accountId)", "konto.provider": "\(identity.provider)"])
        return try await finishExternalSignIn(credential, providerName: identity.provider, clients: clients, at: now)
    }

    /// A first sign-in: a new account (or the anonymous session's), a link to the account whose verified address
    /// the provider vouches for (where the operator allows it), or the sign-up to complete.
    func createExternalAccount(
        _ provider: IdentityProvider, verified: VerifiedIdentity, name: PersonName?, refreshToken: ProviderTokenBox.RefreshToken?,
        request: IdentityExternalLoginRequest, pendingId: String?, clients: [[UInt8]], at now: Timestamp
    ) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        var userId = request.userId.map(UserIdNormalization.trimmed)
        var takenAddress = false
        if userId == nil, configuration.userIdType == .emailAddress, let email = verified.email {
            let normalized = UserIdNormalization.normalized(email, type: .emailAddress)
            if let owner = try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalized) }) {
                if providers.providers.linkByVerifiedEmail, verified.emailVerified, owner.emailVerifiedAt != nil, request.anonymousSession == nil {
                    return try await linkByEmail(provider, verified: verified, refreshToken: refreshToken, to: owner, pendingId: pendingId, clients: clients, at: now)
                }
                // Whoever holds a provider's vouched-for address may learn it has an account; an unverified one is
                // not offered at all (it says nothing about who signs in).
                takenAddress = verified.emailVerified
            } else if verified.emailVerified {
                userId = email
            }
        }
        let details = externalDetails(request.details, verified: verified, name: name)
        let checked: AccountDetails
        do {
            checked = try opener.checkSignUp(userId: userId ?? "", password: nil, details: details)
        } catch {
            // Completing with a sign-up token: the values are refused as in any sign-up (the token still works).
            if pendingId != nil { throw error }
            return try await signUpToComplete(provider, verified: verified, name: name, refreshToken: refreshToken, userId: userId, details: details, takenAddress: takenAddress, problems: error, at: now)
        }
        guard let userId, !userId.isEmpty else {
            return try await signUpToComplete(provider, verified: verified, name: name, refreshToken: refreshToken, userId: nil, details: details, takenAddress: takenAddress, problems: nil, at: now)
        }
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        // A taken userId is refused before the sign-up token is used up (it is sent again with another).
        if pendingId != nil, try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
            throw ServiceError(AccountError(code: .credentialsTaken))
        }
        // Each verified token and each sign-up token makes one account.
        if let pendingId {
            guard let expiresAt = Timestamp(checkingSeconds: verified.expiresAt) else { throw IdentityTokenRefusal.implausibleLifetime.error }
            try await useOnce(digest: Self.onceDigest("sign-up", pendingId), until: expiresAt.adding(.seconds(3_600)))
        }
        let addressVerified = verified.emailVerified && configuration.userIdType == .emailAddress
            && verified.email.map { UserIdNormalization.normalized($0, type: .emailAddress) == normalizedUserId } == true
        var upgrading: StoredSession?
        if let anonymous = request.anonymousSession {
            let session = try await sessions.validSession(anonymous, at: now)
            guard session.accountIsAnonymous else { throw ServiceError(AccountError(code: .alreadySignedUp)) }
            if try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
                throw ServiceError(AccountError(code: .credentialsTaken))
            }
            upgrading = session
        }
        let opened = try await opener.openAccount(
            AccountOpening(
                credential: .external(provider, verified, refreshToken), userId: userId, normalizedUserId: normalizedUserId, details: checked,
                addressVerified: addressVerified, upgrading: upgrading, clients: clients
            ),
            at: now
        )
        return IdentityExternalLoginAnswer(accountSession: opened, created: true)
    }

    /// The operator's automatic link (`linkByVerifiedEmail`): both addresses verified; then a sign-in there.
    func linkByEmail(
        _ provider: IdentityProvider, verified: VerifiedIdentity, refreshToken: ProviderTokenBox.RefreshToken?, to owner: StoredCredential,
        pendingId: String?, clients: [[UInt8]], at now: Timestamp
    ) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        let identity = opener.newIdentity(provider, verified: verified, refreshToken: refreshToken, accountId: owner.accountId, at: now)
        let events = identityLinkedEvents(owner.accountId, identity, provider, address: owner.userId, automatic: true, at: now)
        guard try await stored({ () async throws(IdentityStorageError) in
            try await storage.addExternalIdentity(identity, events: events)
        }) else {
            throw ServiceError(AccountError(code: .credentialsTaken, message: "This identity was linked to an account meanwhile: sign in again."))
        }
        logger.info("external identity linked by its verified address", metadata: ["konto.account_id": "\(owner.accountId)", "konto.provider": "\(provider.name)"])
        return try await finishExternalSignIn(owner, providerName: provider.name, clients: clients, at: now)
    }

    /// A provider's sign-in to an existing account: privileged (the provider just authenticated the user), or the
    /// second factor's challenge when one is enrolled.
    func finishExternalSignIn(
        _ credential: StoredCredential, providerName: String, clients: [[UInt8]], at now: Timestamp
    ) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        let demands = try await factors.demandsSecondFactor(credential.accountId)
        let method = (try? provider(named: providerName))?.displayName ?? providerName
        let answer = try await signIn.finishSignIn(
            credential, demandsSecondFactor: demands, privileged: true, clients: clients, method: method, signInMethod: "provider:\(providerName)", at: now
        )
        return IdentityExternalLoginAnswer(accountSession: answer.accountSession, challenge: answer.challenge)
    }

    /// The answer asking for what the account still needs, with a token standing for the verified identity.
    func signUpToComplete(
        _ provider: IdentityProvider, verified: VerifiedIdentity, name: PersonName?, refreshToken: ProviderTokenBox.RefreshToken?,
        userId: String?, details: AccountDetails, takenAddress: Bool, problems: ServiceError?, at now: Timestamp
    ) async throws(ServiceError) -> IdentityExternalLoginAnswer {
        var missing = problems?.fields ?? []
        if userId == nil || userId?.isEmpty == true {
            missing.removeAll { $0.key == UserIdKey.identifier && $0.code == .missingAccountValue }
            let message = takenAddress
                ? "An account uses this provider's address: sign in to it and link the provider there, or choose another."
                : "Choose a user identifier."
            missing.append(AccountFieldError(key: UserIdKey.identifier, code: .missingAccountValue, message: message))
        }
        var offered = details.storedValues
        if let userId, !userId.isEmpty { offered[UserIdKey.identifier] = .string(userId) }
        let expiresAt = now.adding(options.challengeLifetime * 2)
        let pending = PendingExternalSignUp(id: UUID().uuidString.lowercased(), identity: verified, name: name, refreshToken: refreshToken, expiresAt: expiresAt)
        return IdentityExternalLoginAnswer(signUp: IdentityExternalSignUp(
            token: BearerToken(providerTokens.seal(pending)), expiresAt: expiresAt, provider: provider.name,
            missing: missing.sorted { $0.key < $1.key }, details: AccountDetails(values: offered, userIdType: configuration.userIdType)
        ))
    }

    /// The details of a new account: the caller's, with the provider's name and (where userIds are usernames) address
    /// where the deployment has those keys and the caller did not set them.
    func externalDetails(_ given: AccountDetails?, verified: VerifiedIdentity, name: PersonName?) -> AccountDetails {
        var values = given?.storedValues ?? [:]
        let keys = Set(configuration.keys.map(\.identifier))
        let fromToken = verified.givenName != nil || verified.familyName != nil ? PersonName(givenName: verified.givenName, familyName: verified.familyName) : nil
        if keys.contains(NameKey.identifier), values[NameKey.identifier] == nil, let name = name ?? fromToken {
            var object: [String: AccountValue] = [:]
            if let given = name.givenName?.prefix(100), !given.isEmpty { object["givenName"] = .string(String(given)) }
            if let family = name.familyName?.prefix(100), !family.isEmpty { object["familyName"] = .string(String(family)) }
            if !object.isEmpty { values[NameKey.identifier] = .object(object) }
        }
        if configuration.userIdType == .username, keys.contains(EmailKey.identifier), values[EmailKey.identifier] == nil, let email = verified.email {
            values[EmailKey.identifier] = .string(email)
        }
        return AccountDetails(values: values, userIdType: configuration.userIdType)
    }

    // MARK: Linking

    /// Links an identity to the signed-in account (security-related). `account.credentialsTaken` when it is linked
    /// to another account; linking one the account has already answers it again.
    func linkIdentity(_ request: IdentityLinkIdentityRequest) async throws(ServiceError) -> IdentityExternalIdentity {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let provider = try provider(named: request.provider)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let accountId = session.accountId
        _ = try await factors.signedUpCredential(accountId)
        let (verified, refreshToken) = try await verifiedIdentity(
            provider, idToken: request.idToken, nonce: request.nonce, code: request.authorizationCode,
            codeVerifier: request.codeVerifier, redirectURI: request.redirectURI, at: now
        )
        if let (existing, _) = try await stored({ () async throws(IdentityStorageError) in
            try await storage.externalIdentity(provider: provider.name, subject: verified.subject)
        }) {
            guard existing.accountId == accountId else {
                throw ServiceError(AccountError(code: .credentialsTaken, message: "This identity is linked to another account."))
            }
            return Self.info(existing)
        }
        let identity = opener.newIdentity(provider, verified: verified, refreshToken: refreshToken, accountId: accountId, at: now)
        let address = await mail.mailAddress(accountId: accountId)
        let events = identityLinkedEvents(accountId, identity, provider, address: address, automatic: false, at: now)
        guard try await stored({ () async throws(IdentityStorageError) in
            try await storage.addExternalIdentity(identity, events: events)
        }) else {
            throw ServiceError(AccountError(code: .credentialsTaken, message: "This identity is linked to another account."))
        }
        logger.info("external identity linked", metadata: ["konto.account_id": "\(accountId)", "konto.provider": "\(provider.name)"])
        return Self.info(identity)
    }

    /// The signed-in account's linked identities.
    func listIdentities(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityExternalIdentities {
        let session = try await sessions.validSession(request.token, at: clock())
        let accountId = session.accountId
        let identities = try await stored { () async throws(IdentityStorageError) in try await storage.externalIdentities(accountId: accountId) }
        return IdentityExternalIdentities(identities: identities.map(Self.info))
    }

    /// Unlinks one of the account's identities (security-related); refused with `account.lastSignInMethod` when the
    /// account has no password and no other identity. A refresh token kept for it is revoked at the provider.
    func unlinkIdentity(_ request: IdentityUnlinkIdentityRequest) async throws(ServiceError) -> IdentityDone {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        return try await unlink(identityId: request.identityId, of: session.accountId, at: now)
    }

    /// Unlinks one of the account's identities, the owner's or an operator's way: never its last way in
    /// (`account.lastSignInMethod`); `account.identityNotFound` for no such identity of this account.
    func unlink(identityId: String, of accountId: String, at now: Timestamp) async throws(ServiceError) -> IdentityDone {
        guard identityId.utf8.count <= 64 else { throw ServiceError(AccountError(code: .identityNotFound)) }
        let identities = try await stored { () async throws(IdentityStorageError) in try await storage.externalIdentities(accountId: accountId) }
        guard let target = identities.first(where: { $0.id == identityId }) else { throw ServiceError(AccountError(code: .identityNotFound)) }
        let events = [event(accountId, .identityUnlinked(identityId: identityId, provider: target.provider), at: now)]
        let removal = try await stored { () async throws(IdentityStorageError) in
            try await storage.removeExternalIdentity(accountId: accountId, identityId: identityId, keepingWayIn: true, events: events)
        }
        switch removal {
        case .notFound:
            throw ServiceError(AccountError(code: .identityNotFound))
        case .lastSignInMethod:
            throw ServiceError(AccountError(code: .lastSignInMethod))
        case .removed:
            logger.info("external identity unlinked", metadata: ["konto.account_id": "\(accountId)", "konto.provider": "\(target.provider)"])
            return IdentityDone()
        }
    }

    // MARK: Web flow

    /// The providers offered, for sign-in pages.
    func identityProviders(_ request: IdentityClientRequest) -> IdentityProviderList {
        IdentityProviderList(providers: providers.providers.providers.map { .init(name: $0.name, displayName: $0.displayName) })
    }

    /// The provider's authorization URL for the caller's state, nonce and PKCE challenge.
    func externalAuthorization(_ request: IdentityAuthorizationRequest) async throws(ServiceError) -> IdentityAuthorizationURL {
        let provider = try provider(named: request.provider)
        var fields: [AccountFieldError] = []
        if !ProviderURL.isAcceptable(request.redirectURI, allowingQuery: true) {
            fields.append(AccountFieldError(key: "redirectURI", code: .invalidType, message: "Give an https URL (http only on localhost) of at most 512 characters."))
        }
        for (key, value) in [("state", request.state), ("nonce", request.nonce), ("codeChallenge", request.codeChallenge)] where !Self.isOpaque(value) {
            fields.append(AccountFieldError(key: key, code: .invalidType, message: "Give 16 to 256 base64url characters."))
        }
        guard fields.isEmpty else { throw ServiceError(AccountError(code: .validationFailed, fields: fields)) }
        return IdentityAuthorizationURL(url: try await providers.authorizationURL(
            provider, redirectURI: request.redirectURI, state: request.state, nonce: request.nonce, codeChallenge: request.codeChallenge
        ))
    }

    // MARK: Helpers

    func provider(named name: String) throws(ServiceError) -> IdentityProvider {
        // Not found, as a feature the deployment does not offer (the email code's sign-in when off).
        guard let provider = providers.providers[name] else {
            throw ServiceError(AccountError(code: .notFound, message: "No such identity provider is configured."))
        }
        return provider
    }

    /// The identity a request proves: a native ID token (with Apple's code exchanged for the refresh token kept for
    /// revocation), or a web flow's code exchanged for the ID token. The token's nonce is used up here.
    func verifiedIdentity(
        _ provider: IdentityProvider, idToken: SecretString?, nonce: SecretString?, code: SecretString?, codeVerifier: SecretString?,
        redirectURI: String?, at now: Timestamp
    ) async throws(ServiceError) -> (VerifiedIdentity, ProviderTokenBox.RefreshToken?) {
        let seconds = now.date.timeIntervalSince1970
        let verifier = providers.verifier
        if let idToken {
            let verified = try await verifier.verify(
                idToken.value, provider: provider, nonce: nonce?.value, hashedNonce: provider.hashedNonce, audiences: provider.acceptedAudiences, at: seconds
            )
            try await useNonce(nonce?.value ?? "", provider: provider, until: verified.expiresAt)
            var refreshToken: ProviderTokenBox.RefreshToken?
            if let code, code.value.utf8.count <= 2_048 {
                // Apple's native flow: the app's code, exchanged as the app, gives the refresh token to revoke at
                // deletion. Kept only when the exchange's ID token names the same user.
                let response = try await providers.exchange(code.value, provider: provider, clientId: verified.audience, codeVerifier: nil, redirectURI: nil)
                if let token = response.refreshToken, let exchangedToken = response.idToken,
                   let exchanged = try? await verifier.verify(exchangedToken, provider: provider, nonce: nil, hashedNonce: false, audiences: [verified.audience], at: seconds, checkingNonce: false),
                   exchanged.subject == verified.subject {
                    refreshToken = .init(clientId: verified.audience, token: token)
                } else {
                    logger.warning("authorization code did not give a refresh token for the signed-in user", metadata: ["konto.provider": "\(provider.name)"])
                }
            }
            return (verified, refreshToken)
        }
        guard let code, let codeVerifier, let redirectURI, code.value.utf8.count <= 2_048, codeVerifier.value.utf8.count <= 256, ProviderURL.isAcceptable(redirectURI, allowingQuery: true) else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [
                AccountFieldError(key: "idToken", code: .missingAccountValue, message: "Give the provider's ID token, or the authorization code with its verifier and redirect URI."),
            ]))
        }
        let response = try await providers.exchange(code.value, provider: provider, clientId: provider.clientId, codeVerifier: codeVerifier.value, redirectURI: redirectURI)
        guard let token = response.idToken else {
            throw ServiceError(AccountError(code: .invalidIdentityToken, message: "The identity provider answered the code without an ID token."))
        }
        let verified = try await verifier.verify(token, provider: provider, nonce: nonce?.value, hashedNonce: false, audiences: [provider.clientId], at: seconds)
        try await useNonce(nonce?.value ?? "", provider: provider, until: verified.expiresAt)
        return (verified, response.refreshToken.map { .init(clientId: provider.clientId, token: $0) })
    }

    /// A token's nonce works once: remembered until the token expires (and a minute of skew).
    func useNonce(_ nonce: String, provider: IdentityProvider, until expiresAt: Double) async throws(ServiceError) {
        guard let until = Timestamp(checkingSeconds: expiresAt + 120) else { throw IdentityTokenRefusal.implausibleLifetime.error }
        do {
            try await useOnce(digest: Self.onceDigest("nonce", provider.name + "\u{0}" + nonce), until: until)
        } catch where error.code == .invalidIdentityToken {
            throw IdentityTokenRefusal.replayedNonce.error
        }
    }

    func useOnce(digest: [UInt8], until: Timestamp) async throws(ServiceError) {
        guard try await stored({ () async throws(IdentityStorageError) in try await storage.useNonce(digest: digest, expiresAt: until) }) else {
            throw ServiceError(AccountError(code: .invalidIdentityToken, message: "This sign-up was completed already: sign in with the provider again."))
        }
    }

    static func onceDigest(_ purpose: String, _ value: String) -> [UInt8] {
        Array(SHA256.hash(data: Array((purpose + "\u{0}" + value).utf8)))
    }


    static func info(_ identity: StoredExternalIdentity) -> IdentityExternalIdentity {
        IdentityExternalIdentity(
            id: identity.id, provider: identity.provider, email: identity.email, emailVerified: identity.emailVerified,
            createdAt: identity.createdAt, lastUsedAt: identity.lastUsedAt
        )
    }

    static func isOpaque(_ text: String) -> Bool {
        (16...256).contains(text.utf8.count) && text.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
