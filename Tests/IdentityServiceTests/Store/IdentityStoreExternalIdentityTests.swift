import Crypto
import Foundation
@testable import IdentityService
import JWTKit
import KontoContracts
import KontoModel
import Logging
import Synchronization
import Testing

/// Sign-in with external identities in the store (in memory; the storage's part runs on PostgreSQL too in
/// IdentityStorageExternalIdentityTests, the real providers over HTTP in the end-to-end tests).
@Suite struct IdentityStoreExternalIdentityTests {
    let issuer = TestIssuer()
    let appleKey = P256.Signing.PrivateKey()

    /// `test`: a generic provider (web client konto-web, an app's audience); `apple`: hashed nonces, the team's key.
    func fixture(linkByVerifiedEmail: Bool = false, configuration: AccountConfiguration = .default, operatorKey: OperatorKeyText? = nil) throws -> IdentityFixture {
        let providers = IdentityProviders([
            IdentityProvider(name: "test", displayName: "Test ID", issuer: issuer.issuer, clientId: "konto-web", authentication: .secret(SecretString("s3cret")), audiences: ["org.example.app"]),
            IdentityProvider(
                name: "apple", issuer: issuer.issuer, clientId: "org.example.web",
                authentication: .appleKey(teamId: "TEAM123456", keyId: "KEY1234567", privateKey: appleKey),
                audiences: ["org.example.app"], hashedNonce: true, isApple: true
            ),
        ], linkByVerifiedEmail: linkByVerifiedEmail)
        var options = IdentityOptions()
        options.revocationBackoff = .seconds(5)
        options.bootstrapOperatorKey = operatorKey
        return try IdentityFixture(configuration: configuration, options: options, providers: ProviderClient(providers: providers, fetcher: issuer, logger: Logger(label: "test")))
    }

    static func hashed(_ nonce: String) -> String {
        SHA256.hash(data: Array(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A native sign-in with a fresh token for `sub` (a new nonce each time).
    func native(
        _ fixture: IdentityFixture, provider: String = "test", sub: String = "user-1", email: String? = "leland@stanford.edu", emailVerified: Any? = true,
        name: PersonName? = nil, code: String? = nil, anonymous: BearerToken? = nil, userId: String? = nil
    ) async throws -> IdentityExternalLoginAnswer {
        let nonce = "nonce-" + UUID().uuidString
        let claimed = provider == "apple" ? Self.hashed(nonce) : nonce
        let token = issuer.token(issuer.claims(sub: sub, aud: "org.example.app", nonce: claimed, email: email, emailVerified: emailVerified, now: fixture.clock.now.date))
        return try await fixture.store.externalLogin(IdentityExternalLoginRequest(
            provider: provider, idToken: SecretString(token), nonce: SecretString(nonce), authorizationCode: code.map(SecretString.init),
            name: name, userId: userId, anonymousSession: anonymous, clientAddress: "192.0.2.7"
        ))
    }

    @Test func theFirstSignInCreatesTheAccountKeepingTheNameAppleSentOnce() async throws {
        let fixture = try fixture()
        let first = try await native(fixture, provider: "apple", name: PersonName(givenName: "Leland", familyName: "Stanford"))
        let session = try #require(first.accountSession)
        #expect(first.created)
        let info = try await fixture.validate(session.session.token)
        #expect(info.accountId == session.accountId)
        #expect(fixture.profile.profiles[session.accountId]?.storedValues[NameKey.identifier] == .object(["givenName": .string("Leland"), "familyName": .string("Stanford")]))
        // Apple sends the name the first time only: the next sign-in keeps it.
        let second = try #require(try await native(fixture, provider: "apple").accountSession)
        #expect(second.accountId == session.accountId)
        #expect(fixture.profile.profiles[session.accountId]?.storedValues[NameKey.identifier] == .object(["givenName": .string("Leland"), "familyName": .string("Stanford")]))
        // The provider's address became the userId, verified because the provider vouches for it.
        let credential = try #require(try await fixture.storage.credential(accountId: session.accountId))
        #expect(credential.userId == "leland@stanford.edu" && credential.emailVerifiedAt != nil && credential.passwordHash == nil)
        let kinds = try await fixture.events().filter { $0.accountId == session.accountId }.map(\.kind.name)
        #expect(kinds.filter { $0 == "identityLinked" }.count == 1)
        // No password works for it (there is none).
        #expect(await identityError { try await fixture.login("leland@stanford.edu", password: "anything at all") }?.code == .wrongCredentials)
    }

    @Test func aTokenWorksOnce() async throws {
        let fixture = try fixture()
        let nonce = "nonce-replayed-0123"
        let token = issuer.token(issuer.claims(nonce: nonce, now: fixture.clock.now.date))
        let request = IdentityExternalLoginRequest(provider: "test", idToken: SecretString(token), nonce: SecretString(nonce), name: PersonName(givenName: "L"))
        _ = try await fixture.store.externalLogin(request)
        let replay = await identityError { try await fixture.store.externalLogin(request) }
        #expect(replay?.code == .invalidIdentityToken)
        #expect(replay?.message.contains(IdentityTokenRefusal.replayedNonce.rawValue) == true)
        // Many at once: one account, the others refused.
        let racing = issuer.token(issuer.claims(sub: "user-2", nonce: "nonce-race-0123456", email: "race@example.org", now: fixture.clock.now.date))
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    (try? await fixture.store.externalLogin(IdentityExternalLoginRequest(
                        provider: "test", idToken: SecretString(racing), nonce: SecretString("nonce-race-0123456"), name: PersonName(givenName: "R")
                    ))) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
    }

    @Test func whatTheProviderDidNotGiveIsAskedForThenTheSignUpCompletesOnce() async throws {
        let fixture = try fixture()
        // No address at all, no name: the userId and the name are asked for.
        let answer = try await native(fixture, email: nil)
        let signUp = try #require(answer.signUp)
        #expect(answer.accountSession == nil)
        #expect(signUp.missing.map(\.key) == [NameKey.identifier, UserIdKey.identifier])
        // Completing with a value the rules refuse: refused, the token still works.
        let bad = await identityError {
            try await fixture.store.externalLogin(IdentityExternalLoginRequest(provider: "test", signUpToken: signUp.token, userId: "not an address", details: AccountDetails(values: ["name": IdentityFixture.name])))
        }
        #expect(bad?.code == .validationFailed)
        let complete = IdentityExternalLoginRequest(provider: "test", signUpToken: signUp.token, userId: "leland@stanford.edu", details: AccountDetails(values: ["name": IdentityFixture.name]))
        let done = try await fixture.store.externalLogin(complete)
        let session = try #require(done.accountSession)
        #expect(done.created)
        // The address typed is not the provider's: unverified, a link is sent.
        #expect(try await fixture.storage.credential(accountId: session.accountId)?.emailVerifiedAt == nil)
        #expect(await identityError { try await fixture.store.externalLogin(complete) }?.code == .invalidIdentityToken)
        // The identity signs in to that account from now on.
        #expect(try await native(fixture, email: nil).accountSession?.accountId == session.accountId)
        // A token from elsewhere is not a sign-up token.
        #expect(await identityError {
            try await fixture.store.externalLogin(IdentityExternalLoginRequest(provider: "test", signUpToken: BearerToken("forged"), userId: "x@example.org"))
        }?.code == .invalidIdentityToken)
    }

    @Test func anUnverifiedAddressNeverTakesOverAnAccount() async throws {
        let fixture = try fixture(linkByVerifiedEmail: true)
        let owner = try await fixture.signUp()
        // The provider does not vouch for the address: not offered, not linked, the owner's account untouched.
        let unverified = try await native(fixture, emailVerified: false, name: PersonName(givenName: "Mallory"))
        let signUp = try #require(unverified.signUp)
        #expect(signUp.details.storedValues[UserIdKey.identifier] == nil)
        #expect(signUp.missing.map(\.key) == [UserIdKey.identifier])
        // Apple's string "false" is not a yes either.
        #expect(try await native(fixture, provider: "apple", sub: "user-9", emailVerified: "false", name: PersonName(givenName: "M")).signUp != nil)
        // Vouched for, but the owner never verified the address: still not linked.
        let vouched = try #require(try await native(fixture, sub: "user-3", name: PersonName(givenName: "M")).signUp)
        #expect(vouched.missing.first?.message.contains("sign in to it and link") == true)
        #expect(try await fixture.store.listIdentities(IdentitySessionRequest(token: owner.session.token)).identities.isEmpty)
    }

    @Test func bothAddressesVerifiedJoinTheAccountWhereTheOperatorAllowsIt() async throws {
        for allowed in [false, true] {
            let fixture = try fixture(linkByVerifiedEmail: allowed)
            let owner = try await fixture.signUp()
            let link = try await IdentityStoreMailTests.verificationToken(fixture)
            _ = try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(link)))
            let answer = try await native(fixture, name: PersonName(givenName: "Leland"))
            let told = try await IdentityStoreMailTests.mails(fixture).filter { $0.request.message == .identityLinked }
            if allowed {
                #expect(answer.accountSession?.accountId == owner.accountId)
                #expect(answer.created == false)
                // An automatic link is told of like the owner's own, saying why it happened.
                #expect(told.map(\.request.to) == ["leland@stanford.edu"] && told.first?.request.values["automatic"] == "true")
            } else {
                #expect(answer.signUp != nil)
                #expect(told.isEmpty)
            }
        }
    }

    @Test func anAnonymousAccountSignsUpKeepingItsAccountId() async throws {
        let fixture = try fixture()
        let anonymous = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let answer = try await native(fixture, name: PersonName(givenName: "Leland"), anonymous: anonymous.session.token)
        let session = try #require(answer.accountSession)
        #expect(session.accountId == anonymous.accountId && answer.created)
        #expect(await identityError { try await fixture.validate(anonymous.session.token) }?.code == .unauthenticated)
        #expect(try await fixture.store.listIdentities(IdentitySessionRequest(token: session.session.token)).identities.map(\.provider) == ["test"])
        // A signed-up account's session is not anonymous.
        #expect(await identityError { try await native(fixture, sub: "user-5", email: "other@example.org", name: PersonName(givenName: "O"), anonymous: session.session.token) }?.code == .alreadySignedUp)
    }

    @Test func theOwnerLinksListsAndUnlinksButNeverTheLastWayIn() async throws {
        let fixture = try fixture()
        let owner = try await fixture.signUp()
        let token = owner.session.token
        let nonce = "nonce-link-0123456789"
        let idToken = issuer.token(issuer.claims(sub: "linked-1", aud: "konto-web", nonce: nonce, email: "other@example.org", now: fixture.clock.now.date))
        let linked = try await fixture.store.linkIdentity(IdentityLinkIdentityRequest(token: token, provider: "test", idToken: SecretString(idToken), nonce: SecretString(nonce)))
        #expect(linked.provider == "test" && linked.email == "other@example.org" && linked.emailVerified)
        // The owner is told of the new way in.
        let told = try await IdentityStoreMailTests.mails(fixture).filter { $0.request.message == .identityLinked }
        #expect(told.map(\.request.to) == ["leland@stanford.edu"] && told.first?.request.values == ["provider": "Test ID", "automatic": "false"])
        #expect(try await fixture.store.listIdentities(IdentitySessionRequest(token: token)).identities == [linked])
        // It signs in to the owner's account now.
        #expect(try await native(fixture, sub: "linked-1", email: "other@example.org").accountSession?.accountId == owner.accountId)
        // Another account cannot take it.
        let other = try await fixture.signUp("mallory@example.org")
        let again = issuer.token(issuer.claims(sub: "linked-1", aud: "konto-web", nonce: "nonce-link-again-01", now: fixture.clock.now.date))
        #expect(await identityError {
            try await fixture.store.linkIdentity(IdentityLinkIdentityRequest(token: other.session.token, provider: "test", idToken: SecretString(again), nonce: SecretString("nonce-link-again-01")))
        }?.code == .credentialsTaken)
        // Security-related: outside the privileged window the password is asked for.
        fixture.clock.advance(by: .seconds(600))
        #expect(await identityError { try await fixture.store.unlinkIdentity(IdentityUnlinkIdentityRequest(token: token, identityId: linked.id)) }?.code == .reauthenticationRequired)
        #expect(await identityError { try await fixture.store.unlinkIdentity(IdentityUnlinkIdentityRequest(token: token, currentPassword: SecretString("correct horse battery"), identityId: "nope")) }?.code == .identityNotFound)
        _ = try await fixture.store.unlinkIdentity(IdentityUnlinkIdentityRequest(token: token, currentPassword: SecretString("correct horse battery"), identityId: linked.id))
        #expect(try await fixture.store.listIdentities(IdentitySessionRequest(token: token)).identities.isEmpty)
        let kinds = try await fixture.events().filter { $0.accountId == owner.accountId }.map(\.kind.name)
        #expect(kinds.contains("identityLinked") && kinds.contains("identityUnlinked"))

        // An account made by a provider has no password: its only identity stays.
        let made = try #require(try await native(fixture, sub: "solo", email: "solo@example.org", name: PersonName(givenName: "S")).accountSession)
        let identities = try await fixture.store.listIdentities(IdentitySessionRequest(token: made.session.token)).identities
        #expect(await identityError { try await fixture.store.unlinkIdentity(IdentityUnlinkIdentityRequest(token: made.session.token, identityId: identities[0].id)) }?.code == .lastSignInMethod)
    }

    @Test("an operator unlinks an identity of an account with a password (audited as the operator's), never the last way in, only with factors:write")
    func anOperatorUnlinksButNeverTheLastWayIn() async throws {
        let key = OperatorKeyText.generate()
        let fixture = try fixture(operatorKey: key)
        try await fixture.store.installBootstrapOperatorKey()
        let call = IdentityOperatorCall(key: SecretString(key.text), clientAddress: "192.0.2.9")
        let owner = try await fixture.signUp()
        let nonce = "nonce-operator-0123456789"
        let idToken = issuer.token(issuer.claims(sub: "linked-2", aud: "konto-web", nonce: nonce, email: "other@example.org", now: fixture.clock.now.date))
        let linked = try await fixture.store.linkIdentity(IdentityLinkIdentityRequest(token: owner.session.token, provider: "test", idToken: SecretString(idToken), nonce: SecretString(nonce)))
        let reader = try await fixture.store.createOperatorKey(.init(operatorCall: call, name: "reader", scopes: [.accountsRead]))
        let readerCall = IdentityOperatorCall(key: SecretString(reader.secret.value), clientAddress: "192.0.2.9")
        #expect(await identityError {
            try await fixture.store.unlinkAccountIdentity(.init(operatorCall: readerCall, accountId: owner.accountId, identityId: linked.id))
        }?.code == .adminScopeMissing)
        // Another account's identity is not found at this one.
        let made = try #require(try await native(fixture, sub: "solo-2", email: "solo2@example.org", name: PersonName(givenName: "S")).accountSession)
        let solo = try await fixture.store.listIdentities(IdentitySessionRequest(token: made.session.token)).identities[0]
        #expect(await identityError {
            try await fixture.store.unlinkAccountIdentity(.init(operatorCall: call, accountId: owner.accountId, identityId: solo.id))
        }?.code == .identityNotFound)
        #expect(await identityError {
            try await fixture.store.unlinkAccountIdentity(.init(operatorCall: call, accountId: made.accountId, identityId: solo.id))
        }?.code == .lastSignInMethod)
        _ = try await fixture.store.unlinkAccountIdentity(.init(operatorCall: call, accountId: owner.accountId, identityId: linked.id))
        #expect(try await fixture.store.listIdentities(IdentitySessionRequest(token: owner.session.token)).identities.isEmpty)
        let entries = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: call, accountId: owner.accountId)).entries
        #expect(entries.contains { $0.type == "identity.unlinked" && $0.actorType == .operator && $0.actorId == key.keyId })
        #expect(entries.contains { $0.type == "admin.unlinkAccountIdentity" && $0.facts["outcome"] == "ok" })
    }

    @Test func deletionRevokesAppleTokenExactlyOnceEvenWhenTheFirstAttemptFails() async throws {
        let fixture = try fixture()
        // Apple's native flow: the app's code exchanged (as the app) for the refresh token.
        let exchanged = issuer.token(issuer.claims(sub: "apple-1", aud: "org.example.app", nonce: nil, now: fixture.clock.now.date))
        issuer.issue(code: "code-1", idToken: exchanged, refreshToken: "rt-apple-1")
        let session = try #require(try await native(fixture, provider: "apple", sub: "apple-1", name: PersonName(givenName: "A"), code: "code-1").accountSession)
        let request = try #require(issuer.state.withLock { $0.tokenRequests.first })
        #expect(request["client_id"] == "org.example.app" && request["grant_type"] == "authorization_code")
        // Apple's client secret: ES256 under the team's key, kid, iss team, sub the client, aud Apple.
        let secret = try #require(request["client_secret"])
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: appleKey.publicKey))
        struct Claims: JWTPayload {
            var iss: String; var sub: String; var aud: String; var iat: Double; var exp: Double
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let claims = try await keys.verify(secret, as: Claims.self)
        #expect(claims.iss == "TEAM123456" && claims.sub == "org.example.app" && claims.aud == "https://appleid.apple.com" && claims.exp - claims.iat <= 300)
        #expect(String(decoding: Data(base64Encoded: String(secret.split(separator: ".")[0]) + "==") ?? Data(), as: UTF8.self).contains("KEY1234567"))
        // The refresh token is kept sealed.
        let stored = try #require(try await fixture.storage.externalIdentities(accountId: session.accountId).first?.sealedRefreshToken)
        #expect(!String(decoding: stored, as: UTF8.self).contains("rt-apple-1"))

        _ = try await fixture.store.delete(IdentityDeleteRequest(token: session.session.token))
        issuer.state.withLock { $0.failRevocations = 1 }
        #expect(await fixture.store.runRevocations() == 0)
        // Not due before its backoff.
        #expect(await fixture.store.runRevocations() == 0)
        fixture.clock.advance(by: .seconds(10))
        #expect(await fixture.store.runRevocations() == 1)
        fixture.clock.advance(by: .seconds(3_600))
        #expect(await fixture.store.runRevocations() == 0)
        let revocations = issuer.state.withLock { $0.revocations }
        #expect(revocations.count == 1)
        #expect(revocations.first?["token"] == "rt-apple-1" && revocations.first?["client_id"] == "org.example.app" && revocations.first?["token_type_hint"] == "refresh_token")
        #expect(issuer.state.withLock { $0.failedRevocations } == 1)
    }

    @Test func aRevocationThatKeepsFailingIsGivenUpAsDead() async throws {
        let fixture = try fixture()
        let exchanged = issuer.token(issuer.claims(sub: "apple-2", aud: "org.example.app", nonce: nil, now: fixture.clock.now.date))
        issuer.issue(code: "code-2", idToken: exchanged, refreshToken: "rt-apple-2")
        let session = try #require(try await native(fixture, provider: "apple", sub: "apple-2", email: "a2@example.org", name: PersonName(givenName: "A"), code: "code-2").accountSession)
        _ = try await fixture.store.delete(IdentityDeleteRequest(token: session.session.token))
        issuer.state.withLock { $0.failRevocations = 1_000 }
        for _ in 0..<fixture.store.options.revocationAttempts {
            _ = await fixture.store.runRevocations()
            fixture.clock.advance(by: .seconds(3_700))
        }
        #expect(try await fixture.storage.deadRevocations().count == 1)
        #expect(issuer.state.withLock { $0.failedRevocations } == fixture.store.options.revocationAttempts)
    }

    @Test func theWebFlowExchangesTheCodeWithItsVerifier() async throws {
        let fixture = try fixture()
        let url = try await fixture.store.externalAuthorization(IdentityAuthorizationRequest(
            provider: "test", redirectURI: "http://localhost:8080/account/oidc/test/callback", state: "state-0123456789abcdef",
            nonce: "nonce-0123456789abcdef", codeChallenge: "challenge-0123456789abcdef0123456789abcdef012"
        )).url
        let components = try #require(URLComponents(string: url))
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        #expect(url.hasPrefix(issuer.issuer + "/authorize?"))
        #expect(query["client_id"] == "konto-web" && query["code_challenge_method"] == "S256" && query["state"] == "state-0123456789abcdef" && query["scope"] == "openid email profile")
        issuer.issue(code: "web-code", idToken: issuer.token(issuer.claims(sub: "web-1", nonce: "nonce-0123456789abcdef", email: "web@example.org", now: fixture.clock.now.date)))
        let answer = try await fixture.store.externalLogin(IdentityExternalLoginRequest(
            provider: "test", nonce: SecretString("nonce-0123456789abcdef"), authorizationCode: SecretString("web-code"), codeVerifier: SecretString("verifier-0123456789"),
            redirectURI: "http://localhost:8080/account/oidc/test/callback", name: PersonName(givenName: "W")
        ))
        #expect(answer.accountSession != nil)
        let request = try #require(issuer.state.withLock { $0.tokenRequests.last })
        #expect(request["code_verifier"] == "verifier-0123456789" && request["client_secret"] == "s3cret" && request["redirect_uri"] == "http://localhost:8080/account/oidc/test/callback")
        // A used code is the provider's refusal.
        #expect(await identityError {
            try await fixture.store.externalLogin(IdentityExternalLoginRequest(
                provider: "test", nonce: SecretString("nonce-0123456789abcdef"), authorizationCode: SecretString("web-code"), codeVerifier: SecretString("verifier-0123456789"),
                redirectURI: "http://localhost:8080/account/oidc/test/callback"
            ))
        }?.code == .invalidIdentityToken)
        #expect(await identityError { try await fixture.store.externalLogin(IdentityExternalLoginRequest(provider: "nobody", idToken: SecretString("x"))) }?.code == .notFound)
        #expect(await identityError { try await fixture.store.externalLogin(IdentityExternalLoginRequest(provider: "test")) }?.code == .validationFailed)
    }

    @Test func aSecondFactorIsStillAskedFor() async throws {
        let fixture = try fixture()
        let session = try #require(try await native(fixture, name: PersonName(givenName: "L")).accountSession)
        let enrolment = try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: session.session.token))
        let secret = try IdentityStoreFactorTests.key(of: enrolment)
        _ = try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: session.session.token, factorId: enrolment.factorId, code: IdentityStoreFactorTests.code(secret, fixture)))
        let answer = try await native(fixture)
        #expect(answer.accountSession == nil && answer.challenge != nil)
    }

    @Test func aResetOfAnUnprovenAddressEndsTheSquattersIdentity() async throws {
        let fixture = try fixture()
        // Someone signs in with a provider that does not vouch for the address, and types the owner's address.
        let answer = try await native(fixture, sub: "squatter", emailVerified: false, name: PersonName(givenName: "M"))
        let signUp = try #require(answer.signUp)
        let made = try #require(try await fixture.store.externalLogin(IdentityExternalLoginRequest(
            provider: "test", signUpToken: signUp.token, userId: "leland@stanford.edu", details: AccountDetails(values: ["name": IdentityFixture.name])
        )).accountSession)
        // The owner resets the password through the mail: the squatter's identity goes, and no longer signs in.
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = try await IdentityStoreRecoveryTests.resetToken(fixture)
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("a brand new passphrase")))
        #expect(try await fixture.storage.externalIdentities(accountId: made.accountId).isEmpty)
        #expect(try await native(fixture, sub: "squatter", emailVerified: false).signUp != nil)
        #expect(try await fixture.events().filter { $0.accountId == made.accountId }.map(\.kind.name).contains("identityUnlinked"))
    }
}
