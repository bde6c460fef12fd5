import Foundation
import IdentityService
import KontoClient
import KontoModel
import KontoTestSupport
import Testing

/// External identities through KontoClient, on the real services, against a real OpenID Connect provider
/// (oidc-provider-mock as a process).
@Suite("KontoClient: external identities", .timeLimit(.minutes(3)))
struct KontoClientIdentityTests {
    @Test("the providers offered; a first sign-in asks for what the provider did not give, completes, then signs in; an anonymous session is upgraded; linking and unlinking")
    func journey() async throws {
        let provider = try await OIDCProviderProcess.startGeneric()
        do {
            let providers = IdentityProviders([IdentityProvider(name: "generic", displayName: "Generic ID", issuer: provider.issuer, clientId: "konto-web")])
            try await GatewayHarness.withGateway(providers: providers) { gateway in
                let client = KontoClient(gatewayURL: gateway.baseURL)
                #expect(try await client.identityProviders().map { "\($0.name) \($0.displayName)" } == ["generic Generic ID"])

                // No name from the provider: the default configuration requires one.
                let token = try await ExternalIdentityHTTPTests.idToken(provider, sub: "knuth", nonce: "nonce-knuth-000001", claims: ["email": "knuth@example.org", "email_verified": true])
                guard case .signUpRequired(let signUp) = try await client.logIn(provider: "generic", idToken: token, nonce: "nonce-knuth-000001") else {
                    Issue.record("no sign-up asked for"); return
                }
                #expect(signUp.missing.map(\.key) == [NameKey.identifier])
                #expect(signUp.offered.storedValues[UserIdKey.identifier] == .string("knuth@example.org"))
                let signedIn = try await client.completeSignUp(signUp, userId: "knuth@example.org", details: KontoClientTests.named("Donald"))
                #expect(signedIn.session.userId == "knuth@example.org")
                #expect(try await client.account().details[EmailVerifiedKey.self] == true)
                let again = try await ExternalIdentityHTTPTests.idToken(provider, sub: "knuth", nonce: "nonce-knuth-000002", claims: ["email": "knuth@example.org", "email_verified": true])
                guard case .signedIn(let second, let created) = try await KontoClient(gatewayURL: gateway.baseURL).logIn(provider: "generic", idToken: again, nonce: "nonce-knuth-000002") else {
                    Issue.record("no sign-in"); return
                }
                #expect(!created && second.session.accountId == signedIn.session.accountId)
                let identities = try await client.identities()
                #expect(identities.map(\.provider) == ["generic"] && identities.first?.email == "knuth@example.org")
                // The account's only way in stays.
                let refusal = await KontoClientTests.refusal { try await client.unlinkIdentity(id: identities[0].id) }
                #expect(refusal?.code == "account.lastSignInMethod" && refusal?.status == 409)

                // An anonymous session's account signs up with the provider and keeps its accountId.
                let anonymous = KontoClient(gatewayURL: gateway.baseURL)
                let guest = try await anonymous.signInAnonymously()
                let newcomer = try await ExternalIdentityHTTPTests.idToken(provider, sub: "guest", nonce: "nonce-guest-000001", claims: ["email": "guest@example.org", "email_verified": true, "given_name": "Guest"])
                guard case .signedIn(let upgraded, true) = try await anonymous.logIn(provider: "generic", idToken: newcomer, nonce: "nonce-guest-000001") else {
                    Issue.record("not upgraded"); return
                }
                #expect(upgraded.session.accountId == guest.session.accountId && !upgraded.session.isAnonymous)

                // A password account links an identity and unlinks it.
                let owner = KontoClient(gatewayURL: gateway.baseURL)
                _ = try await owner.signUp(userId: "lamport@example.org", password: "time clocks ordering", details: KontoClientTests.named("Leslie"))
                let linkToken = try await ExternalIdentityHTTPTests.idToken(provider, sub: "lamport-elsewhere", nonce: "nonce-lamport-0001")
                let linked = try await owner.linkIdentity(provider: "generic", idToken: linkToken, nonce: "nonce-lamport-0001")
                #expect(try await owner.identities().map(\.id) == [linked.id])
                try await owner.unlinkIdentity(id: linked.id)
                #expect(try await owner.identities().isEmpty)
            }
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }
}
