import Crypto
import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Synchronization
import Testing

/// The provider side of the Identity contract: a running Identity (with Profile) answers every recorded request
/// exactly as recorded, in order, over the wire, on either storage, with its database, its Profile or its hashing
/// threads unavailable where an example says so.
@Suite("Identity contract, provider side", .timeLimit(.minutes(6)))
struct IdentityContractProviderTests {
    /// The examples' throttling threshold is 3 failures; their authenticator apps lock after 4 wrong codes.
    static let options: IdentityOptions = {
        var options = IdentityOptions()
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60))
        options.cleanupInterval = .milliseconds(50)
        options.profileCleanupDelay = .milliseconds(500)
        // One verification mail an hour on request, so the second request shows the limit.
        options.verificationMailsPerHour = 1
        options.verificationCodeAttemptsPerHour = 3
        options.emailCodeLogin = true
        // Four wrong codes in a row lock the authenticator app, before the fifth in the hour throttles.
        options.secondFactorLockAfter = 4
        // The operators' examples start from this key (every scope), as a deployment's first key is installed.
        options.bootstrapOperatorKey = OperatorKeyText(parsing: Self.bootstrapOperatorKey)
        // Konto as an OpenID Provider with one fixed key, so its published JWK is the same in every run.
        // Its clients: the deployment's dashboard (first party, a client secret) and a third party's app (public).
        var openID = try! OpenIDProviderSettings(
            issuer: "https://accounts.example.org", keys: OpenIDSigningKeys([OpenIDSigningKey(pem: Self.openIDKey)]),
            clients: OpenIDClients([
                OpenIDClient(
                    id: "dashboard", name: "Dashboard",
                    authentication: .secret(method: "client_secret_basic", digest: Array(SHA256.hash(data: Data("dashboard-secret-of-the-examples".utf8)))),
                    redirectURIs: ["https://dashboard.example.org/callback"], postLogoutRedirectURIs: ["https://dashboard.example.org/signed-out"],
                    scopes: ["openid", "email", "offline_access"], isFirstParty: true
                ),
                OpenIDClient(id: "study-app", name: "Study App", authentication: .none, redirectURIs: ["https://app.example.org/callback"], scopes: ["openid", "email"]),
            ])
        )
        // An hour: the storage examples present an access token captured long before.
        openID.accessTokenLifetime = .seconds(3_600)
        // One client through the admin API, so the second is over the limit.
        openID.maxStoredClients = 1
        options.openID = openID
        return options
    }()

    /// The examples' OpenID Provider signing key (P-256): a test key, published by `99v-openid-keys.json`.
    static let openIDKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgALLkW8QYjf2AdiL3
        i8sBmUZ59wc9HgHO0MujSHZRLnOhRANCAAQO13BpcQurO9D4A0A1SBoJV6VnJU8B
        x5A/7XRud57WnxJT8r2ykX5NeEOSd6fR6tRI1v+brknVMJKAtQrViyf0
        -----END PRIVATE KEY-----
        """

    /// The examples' bootstrap operator key (`99fa-operator-authorize.json` and after).
    static let bootstrapOperatorKey = "kop_b00757a4b00757a4b00757a4b00757a4AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

    /// The examples' identity providers: `test` (served in the test's process by ``TestIssuer``: web client
    /// `konto-web`, an app's audience `org.example.app`) and `offline` (whose discovery document is never found).
    static func providers(_ issuer: TestIssuer) -> IdentityProviders {
        IdentityProviders([
            IdentityProvider(name: "test", displayName: "Test ID", issuer: issuer.issuer, clientId: "konto-web", authentication: .secret(SecretString("s3cret")), audiences: ["org.example.app"]),
            IdentityProvider(name: "offline", issuer: "https://offline.test", clientId: "konto-web"),
        ])
    }

    /// One hashing thread and no queue: taking the thread is enough for `identity.busy` (examples run one at a time,
    /// so no other example ever finds the pool full).
    static let hashing = PasswordHashingPool.Configuration(parameters: IdentityServiceHarness.cheap, threads: 1, maxQueued: 0)

    @Test("on PostgreSQL, the service answers every example as recorded, its dependencies down where an example says")
    func answersAsRecordedOnPostgres() async throws {
        let examples = try ContractExample.load(service: IdentityContract.serviceName, contractVersion: IdentityContract.version)
        // A server of its own: the examples stop it.
        let differences = try await ContractCondition.withDedicatedDatabase { cluster, database in
            let settings = PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
            let issuer = TestIssuer()
            // A stopped database is an answer after the storage's timeout: 2 s rather than 5 for each of the ~55
            // examples that stop it (the suite's longest test; nothing else here comes near 2 s).
            return try await IdentityServiceHarness.runWithRestartableProfile(
                database: settings, options: Self.options, hashing: Self.hashing, providers: Self.providers(issuer), providerFetcher: issuer,
                storageTimeout: .seconds(2)
            ) { running, profile in
                try await ContractExample.replay(examples, on: running.identity, conditions: [
                    ContractCondition.storageDown: Self.withIdTokens(.storageDown(cluster, health: running.identity), issuer),
                    // Identity's schema only: Profile, in the same database, keeps working.
                    ContractCondition.storageBroken: Self.withIdTokens(.storageBroken(database, schema: "identity"), issuer),
                    ContractCondition.hashersBusy: Self.hashersBusy(running),
                    ContractCondition.profileDown: Self.profileDown(profile, running, issuer),
                    ContractCondition.idTokenIssued: Self.withIdTokens(ContractCondition(establish: {}, end: {}), issuer),
                    ContractCondition.resetTokenMailed: Self.resetTokenMailed(running),
                    ContractCondition.verificationTokenMailed: Self.verificationTokenMailed(running),
                    ContractCondition.signInCodeMailed: Self.signInCodeMailed(running),
                ])
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    @Test("in memory, the service answers every example as recorded, but for those of a database stopped or broken")
    func answersAsRecordedInMemory() async throws {
        // Memory cannot be stopped or lose its tables: those examples are PostgreSQL's alone. (Profile, in memory too,
        // comes back empty from its stop: its examples are the last.)
        let examples = try ContractExample.load(service: IdentityContract.serviceName, contractVersion: IdentityContract.version)
            .filter { !ContractCondition.storageConditions.contains($0.given ?? "") }
        let issuer = TestIssuer()
        let differences = try await IdentityServiceHarness.runWithRestartableProfile(
            database: nil, options: Self.options, hashing: Self.hashing, providers: Self.providers(issuer), providerFetcher: issuer
        ) { running, profile in
            try await ContractExample.replay(examples, on: running.identity, conditions: [
                ContractCondition.hashersBusy: Self.hashersBusy(running),
                ContractCondition.profileDown: Self.profileDown(profile, running, issuer),
                ContractCondition.idTokenIssued: Self.withIdTokens(ContractCondition(establish: {}, end: {}), issuer),
                ContractCondition.resetTokenMailed: Self.resetTokenMailed(running),
                ContractCondition.verificationTokenMailed: Self.verificationTokenMailed(running),
                ContractCondition.signInCodeMailed: Self.signInCodeMailed(running),
            ])
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    /// Takes Identity's one hashing thread with a call that waits for a gate, and opens the gate afterwards. Supplies
    /// the last reset token sent out, if any (a reset confirmation gets as far as the hash only with a real token).
    static func hashersBusy(_ running: IdentityServiceHarness.Running) -> ContractCondition {
        let blocker = Mutex<(gate: ThreadGate, task: Task<Void, any Error>)?>(nil)
        let pool = running.identityServer.store.hashing
        return ContractCondition(
            establish: {
                let gate = ThreadGate()
                let (started, thread) = AsyncStream<Void>.makeStream()
                let task = Task {
                    try await pool.submit {
                        thread.yield()
                        gate.wait()
                    }
                }
                blocker.withLock { $0 = (gate, task) }
                // The thread is taken once the call runs on it.
                for await _ in started { break }
            },
            end: {
                guard let (gate, task) = blocker.withLock({ blocker in defer { blocker = nil }; return blocker }) else { return }
                gate.open()
                try await task.value
            },
            supply: { (try? await resetTokenMailed(running).supply()) ?? [:] }
        )
    }

    /// The token of the last `passwordResetRequested` event in Identity's outbox (no relay runs here, so every event
    /// stays there): what the mail sender would have received.
    static func resetTokenMailed(_ running: IdentityServiceHarness.Running) -> ContractCondition {
        ContractCondition(establish: {}, end: {}, supply: {
            let events = try await running.identityServer.store.storage.pendingEvents(limit: 1_000)
            var tokens: [String] = []
            for event in events {
                if case .passwordResetRequested(userId: _, token: let token, expiresAt: _) = event.kind {
                    tokens.append(try ResetTokenSeal(secret: WireSecret(IdentityServiceHarness.secret)).open(token, accountId: event.accountId))
                }
            }
            guard let token = tokens.last else { throw ContractExampleError("no passwordResetRequested event in Identity's outbox") }
            return ["reset-token": token]
        })
    }

    /// The token of the last verification link in Identity's outbox (a `verifyEmail` mail request), and the code beside
    /// it: what the courier would have mailed.
    static func verificationTokenMailed(_ running: IdentityServiceHarness.Running) -> ContractCondition {
        ContractCondition(establish: {}, end: {}, supply: {
            let events = try await running.identityServer.store.storage.pendingEvents(limit: 100_000)
            var secrets: [(token: String, code: String?)] = []
            let seal = ResetTokenSeal(secret: WireSecret(IdentityServiceHarness.secret))
            for event in events {
                if case let .mailRequested(request) = event.kind, request.message == .verifyEmail, let sealed = request.sealedToken {
                    secrets.append((try seal.open(sealed, accountId: event.accountId), try request.sealedCode.map { try seal.open($0, accountId: event.accountId) }))
                }
            }
            guard let last = secrets.last else { throw ContractExampleError("no verification mail request in Identity's outbox") }
            return ["verification-token": last.token, "verification-code": last.code ?? ""]
        })
    }

    /// The last sign-in code in Identity's outbox (a `signInCode` mail request), once the request's work after its
    /// answer is done: what the courier would have mailed.
    static func signInCodeMailed(_ running: IdentityServiceHarness.Running) -> ContractCondition {
        ContractCondition(establish: {}, end: {}, supply: {
            await running.identityServer.store.pendingWork.finish()
            let events = try await running.identityServer.store.storage.pendingEvents(limit: 100_000)
            var codes: [String] = []
            for event in events {
                if case let .mailRequested(request) = event.kind, request.message == .signInCode, let sealed = request.sealedToken {
                    codes.append(try ResetTokenSeal(secret: WireSecret(IdentityServiceHarness.secret)).open(sealed, accountId: event.accountId))
                }
            }
            guard let code = codes.last else { throw ContractExampleError("no sign-in code mail request in Identity's outbox") }
            return ["sign-in-code": code]
        })
    }

    /// Stops the Profile service Identity calls, and starts it again on the same port afterwards; ends once Identity
    /// reports Profile ready again (its client reconnects with backoff).
    static func profileDown(_ profile: RestartableProfile, _ running: IdentityServiceHarness.Running, _ issuer: TestIssuer) -> ContractCondition {
        ContractCondition(
            establish: {
                try await profile.stop()
                // Held once Identity itself reports Profile gone: a connection it opened before the stop may otherwise
                // still carry one more answer under load (as storageDown waits for the service's own report).
                try await ContractCondition.waitUntil({ await ContractCondition.healthStatus(running.identity) != "ready" }, what: "Identity to notice Profile is gone")
            },
            end: {
                try await profile.start()
                // Ready on several checks in a row: Identity's Profile client takes its connections in turn, so each
                // is tried (one that still held a connection to the stopped Profile fails a check, and the wait goes on
                // until it has been replaced; a single ready answer let the next sign-up meet it under load).
                try await ContractCondition.waitUntil({
                    for _ in 0..<4 where await ContractCondition.healthStatus(running.identity) != "ready" { return false }
                    return true
                }, what: "Identity to reach Profile again on every connection")
            },
            // A sign-in with a mailed code while Profile is down needs the code; an external one, a token.
            supply: { ((try? await signInCodeMailed(running).supply()) ?? [:]).merging(idTokens(issuer)) { $1 } }
        )
    }

    /// `condition`, also supplying fresh ID tokens (``ContractCondition/idTokenIssued``).
    static func withIdTokens(_ condition: ContractCondition, _ issuer: TestIssuer) -> ContractCondition {
        ContractCondition(establish: condition.establish, end: condition.end, supply: {
            try await condition.supply().merging(idTokens(issuer)) { $1 }
        })
    }

    /// Fresh tokens for one new nonce (each token works once: its nonce is remembered).
    static func idTokens(_ issuer: TestIssuer) -> [String: String] {
        let nonce = "nonce-" + UUID().uuidString.lowercased()
        return [
            "nonce": nonce,
            "id-token": issuer.token(issuer.claims(sub: "contract-user", aud: "org.example.app", nonce: nonce, email: "contract-oidc@example.org", emailVerified: true)),
            "id-token-bare": issuer.token(issuer.claims(sub: "contract-bare", aud: "org.example.app", nonce: nonce, email: nil, emailVerified: nil)),
            "id-token-linked": issuer.token(issuer.claims(sub: "contract-linked", aud: "konto-web", nonce: nonce, email: "linked@example.org", emailVerified: false)),
        ]
    }
}
