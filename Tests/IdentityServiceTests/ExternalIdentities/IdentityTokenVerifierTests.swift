import Crypto
import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Logging
import Synchronization
import Testing

/// The ID token checks, each hostile token refused with its own reason (`account.invalidIdentityToken`), against an
/// issuer whose tokens are made without the library Konto verifies with.
@Suite struct IdentityTokenVerifierTests {
    let issuer = TestIssuer()
    let provider: IdentityProvider
    let verifier: IdentityTokenVerifier
    let directory: ProviderDirectory
    let now = Date()

    init() {
        provider = IdentityProvider(name: "test", issuer: issuer.issuer, clientId: "konto-web", audiences: ["org.example.app"])
        directory = ProviderDirectory(providers: IdentityProviders([provider]), fetcher: issuer, keyRefreshCooldown: .seconds(60), logger: Logger(label: "test"))
        verifier = IdentityTokenVerifier(directory: directory)
    }

    func verify(_ token: String, nonce: String? = "n-0123456789abcdef", hashed: Bool = false) async throws -> VerifiedIdentity {
        try await verifier.verify(token, provider: provider, nonce: nonce, hashedNonce: hashed, audiences: provider.acceptedAudiences, at: now.timeIntervalSince1970)
    }

    func refusal(_ token: String, nonce: String? = "n-0123456789abcdef", hashed: Bool = false) async -> String? {
        do {
            _ = try await verify(token, nonce: nonce, hashed: hashed)
            return nil
        } catch let error as ServiceError {
            #expect(error.code == .invalidIdentityToken)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aValidTokenGivesTheIdentity() async throws {
        let identity = try await verify(issuer.token(issuer.claims(aud: ["org.example.app"], emailVerified: "true")))
        #expect(identity == VerifiedIdentity(
            provider: "test", subject: "user-1", email: "leland@stanford.edu", emailVerified: true, audience: "org.example.app", expiresAt: identity.expiresAt
        ))
    }

    @Test func hostileTokensAreRefusedEachForItsReason() async throws {
        let good = issuer.claims()
        let kid = issuer.currentKid
        func with(_ changes: [String: Any?]) -> [String: Any] {
            var claims = good
            for (key, value) in changes { claims[key] = value }
            return claims
        }
        let forged = issuer.token(good, key: P256.Signing.PrivateKey())
        let unsigned = TestIssuer.part(["alg": "none", "kid": kid]) + "." + TestIssuer.part(good) + "."
        // The classic confusion: HS256 with the published key as the HMAC secret.
        let publicPEM = P256.Signing.PrivateKey().publicKey.pemRepresentation
        let hmacInput = TestIssuer.part(["alg": "HS256", "kid": kid]) + "." + TestIssuer.part(good)
        let hmac = hmacInput + "." + TestIssuer.base64url(Array(HMAC<SHA256>.authenticationCode(for: Array(hmacInput.utf8), using: SymmetricKey(data: Array(publicPEM.utf8)))))
        let cases: [(String, String, IdentityTokenRefusal)] = [
            ("wrong signature", forged, .badSignature),
            ("alg none", unsigned, .unsupportedAlgorithm),
            ("HS256 with the public key", hmac, .unsupportedAlgorithm),
            ("unknown kid", issuer.token(good, header: ["alg": "ES256", "kid": "nobody"]), .unknownKey),
            ("wrong iss", issuer.token(with(["iss": "https://evil.test"])), .wrongIssuer),
            ("wrong aud", issuer.token(with(["aud": "someone-else"])), .wrongAudience),
            ("several aud without azp", issuer.token(with(["aud": ["konto-web", "other"]])), .wrongAudience),
            ("expired", issuer.token(with(["exp": Int(now.timeIntervalSince1970) - 61])), .expired),
            // A provider's date far ahead (a hostile or buggy provider): refused before it reaches a conversion.
            ("exp in 8 days", issuer.token(with(["exp": Int(now.timeIntervalSince1970) + 8 * 86_400])), .implausibleLifetime),
            ("exp beyond any date", issuer.token(with(["exp": 1e300])), .implausibleLifetime),
            ("exp past Int64", issuer.token(with(["exp": 9.3e18])), .implausibleLifetime),
            ("iat far back and exp far ahead", issuer.token(with(["iat": -1e300, "exp": 1e18])), .implausibleLifetime),
            ("issued in the future", issuer.token(with(["iat": Int(now.timeIntervalSince1970) + 300])), .issuedInFuture),
            ("no subject", issuer.token(with(["sub": nil])), .missingSubject),
            ("another nonce", issuer.token(with(["nonce": "n-somebody-else"])), .wrongNonce),
            ("no nonce in the token", issuer.token(with(["nonce": nil])), .wrongNonce),
            ("oversized", issuer.token(with(["pad": String(repeating: "x", count: 9_000)])), .oversized),
            ("not a JWT", "not.a-token", .malformed),
            ("garbage header", "e30x.e30.c2ln", .malformed),
        ]
        for (name, token, reason) in cases {
            let message = await refusal(token)
            #expect(message?.contains(reason.rawValue) == true, "\(name): \(message ?? "accepted")")
        }
        // The same claim twice (RFC 7519 §4): parsers disagree on which counts, so neither does. Also when the second
        // spells the name with an escape.
        let base = Int(now.timeIntervalSince1970)
        let claims = #""iss":"\#(issuer.issuer)","aud":"konto-web","iat":\#(base),"exp":\#(base + 600),"nonce":"n-0123456789abcdef""#
        #expect(await refusal(issuer.token(rawClaims: "{" + claims + #","sub":"user-1"}"#)) == nil)
        for duplicated in [#","sub":"user-1","sub":"admin"}"#, #","sub":"user-1","\u0073ub":"admin"}"#, #","sub":"user-1","exp":1}"#] {
            #expect(await refusal(issuer.token(rawClaims: "{" + claims + duplicated))?.contains(IdentityTokenRefusal.duplicateClaim.rawValue) == true, "\(duplicated)")
        }
        // A nonce the client does not send.
        #expect(await refusal(issuer.token(good), nonce: nil)?.contains(IdentityTokenRefusal.missingNonce.rawValue) == true)
    }

    @Test func appleHashesTheNonce() async throws {
        let nonce = "raw-nonce-0123456789"
        let hashed = SHA256.hash(data: Array(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
        let token = issuer.token(issuer.claims(nonce: hashed))
        _ = try await verify(token, nonce: nonce, hashed: true)
        // The hash itself is not the nonce.
        #expect(await refusal(token, nonce: hashed, hashed: true)?.contains(IdentityTokenRefusal.wrongNonce.rawValue) == true)
    }

    @Test func aRotatedKeyIsFetchedOnceItsIdIsSeen() async throws {
        let verifier = IdentityTokenVerifier(directory: ProviderDirectory(providers: IdentityProviders([provider]), fetcher: issuer, keyRefreshCooldown: .zero, logger: Logger(label: "test")))
        _ = try await verifier.verify(issuer.token(issuer.claims()), provider: provider, nonce: "n-0123456789abcdef", hashedNonce: false, audiences: ["konto-web"], at: now.timeIntervalSince1970)
        issuer.rotate()
        _ = try await verifier.verify(issuer.token(issuer.claims()), provider: provider, nonce: "n-0123456789abcdef", hashedNonce: false, audiences: ["konto-web"], at: now.timeIntervalSince1970)
        #expect(issuer.fetches("/jwks") == 2)
    }

    @Test func madeUpKeyIdsCannotMakeIdentityFetchAgainAndAgain() async throws {
        _ = try await verify(issuer.token(issuer.claims()))
        for index in 0..<20 {
            #expect(await refusal(issuer.token(issuer.claims(), header: ["alg": "ES256", "kid": "made-up-\(index)"]))?.contains(IdentityTokenRefusal.unknownKey.rawValue) == true)
        }
        // Within the cooldown, the first fetch is the only one.
        #expect(issuer.fetches("/jwks") == 1)
    }

    @Test func concurrentMissesShareOneFetch() async throws {
        let token = issuer.token(issuer.claims())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await verify(token) }
            }
            try await group.waitForAll()
        }
        #expect(issuer.fetches("/jwks") == 1)
        #expect(issuer.fetches("/openid-configuration") == 1)
    }

    @Test("a discovery naming endpoints over plain http or on a host neither the issuer's nor the operator's is not used")
    func endpointsOnlyWhereChosen() async throws {
        let token = issuer.token(issuer.claims())
        for (field, url) in [("jwks_uri", "http://issuer.test/jwks"), ("jwks_uri", "https://elsewhere.test/jwks"), ("token_endpoint", "http://issuer.test/token"), ("revocation_endpoint", "https://elsewhere.test/revoke")] {
            let issuer = TestIssuer()
            issuer.state.withLock { $0.discovery = [field: url] }
            let directory = ProviderDirectory(providers: IdentityProviders([provider]), fetcher: issuer, keyRefreshCooldown: .seconds(60), logger: Logger(label: "test"))
            let error = await identityError {
                try await IdentityTokenVerifier(directory: directory).verify(issuer.token(issuer.claims()), provider: provider, nonce: "n-0123456789abcdef", hashedNonce: false, audiences: provider.acceptedAudiences, at: now.timeIntervalSince1970)
            }
            #expect(error?.code == ServiceError.identityProviderUnavailable.code, "\(field) \(url): \(error?.message ?? "used")")
            #expect(issuer.fetches("/jwks") == 0, "nothing fetched from \(url)")
        }
        // A host the operator listed is called.
        issuer.state.withLock { $0.discovery = ["jwks_uri": "https://keys.elsewhere.test/jwks"] }
        var listed = provider
        listed.endpointHosts = ["keys.elsewhere.test"]
        let directory = ProviderDirectory(providers: IdentityProviders([listed]), fetcher: issuer, keyRefreshCooldown: .seconds(60), logger: Logger(label: "test"))
        _ = try await IdentityTokenVerifier(directory: directory).verify(token, provider: listed, nonce: "n-0123456789abcdef", hashedNonce: false, audiences: listed.acceptedAudiences, at: now.timeIntervalSince1970)
    }

    @Test func anUnreachableProviderIsUnavailableNotARefusal() async throws {
        issuer.state.withLock { $0.down = true }
        let error = await identityError { try await verify(issuer.token(issuer.claims())) }
        #expect(error?.code == .identityProviderUnavailable)
        #expect(error?.isRetryable == true)
        // Not asked again on every sign-in while it is down.
        _ = await identityError { try await verify(issuer.token(issuer.claims())) }
        #expect(issuer.fetches("/openid-configuration") == 1)
    }

    @Test func aDiscoveryDocumentNamingAnotherIssuerIsNotUsed() async throws {
        let other = IdentityProvider(name: "other", issuer: "https://issuer.test/", clientId: "konto-web")
        let directory = ProviderDirectory(providers: IdentityProviders([other]), fetcher: issuer, logger: Logger(label: "test"))
        let error = await identityError { try await directory.metadata(for: other) }
        #expect(error?.code == .identityProviderUnavailable)
    }
}
