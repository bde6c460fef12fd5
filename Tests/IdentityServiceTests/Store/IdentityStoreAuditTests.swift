import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import Logging
import Testing

/// The audit log through Identity's operations (docs/ADMIN.md, "Audit log"), on both storages.
@Suite("Identity store: audit log")
struct IdentityStoreAuditTests {
    typealias Operators = IdentityStoreOperatorTests

    static func entries(_ fixture: IdentityFixture, accountId: String? = nil, actorId: String? = nil, type: String? = nil) async throws -> [IdentityAuditEntry] {
        try await fixture.store.auditEntries(IdentityAuditQueryRequest(
            operatorCall: Operators.call(Operators.bootstrap.text), accountId: accountId, actorId: actorId, type: type, limit: 500
        )).entries.filter { $0.type != "admin.auditEntries" }
    }

    static func verify(_ fixture: IdentityFixture) async throws -> IdentityAuditVerification {
        try await fixture.store.verifyAudit(IdentityAuditVerifyRequest(operatorCall: Operators.call(Operators.bootstrap.text)))
    }

    @Test("a refused passkey is in the log against its account with the WebAuthn reason; a credential no account has writes nothing", arguments: IdentityStorageKind.allCases)
    func refusedPasskeys(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            let signedUp = try await fixture.signUp()
            let authenticator = IdentityStorePasskeyTests.authenticator()
            try await IdentityStorePasskeyTests.register(authenticator, fixture, token: signedUp.session.token)
            var unverified = SoftwareAuthenticator.Tampering()
            unverified.userVerified = false
            let refused = try IdentityStorePasskeyTests.assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge, tampering: unverified)
            _ = await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: refused)) }
            // A stranger's passkey: no account to put it against.
            let stranger = try IdentityStorePasskeyTests.assertion(IdentityStorePasskeyTests.authenticator(), fixture.store.passkeyLoginOptions(.init()).challenge)
            _ = await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: stranger)) }

            let entries = try await Self.entries(fixture, type: "passkey.refused")
            #expect(entries.map(\.accountId) == [signedUp.accountId])
            #expect(entries.first?.facts["reason"]?.hasPrefix("webauthn.") == true, "\(entries)")
            #expect(try await Self.verify(fixture).intact)
        }
    }

    @Test("sign-ins (failed with their internal reason, or not), an operator's changes and calls land in the log with their actors, sealed and verifiable", arguments: IdentityStorageKind.allCases)
    func actions(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            let account = try await fixture.signUp().accountId
            _ = await identityError { try await fixture.login(password: "wrong horse", address: "192.0.2.9") }
            _ = await identityError { try await fixture.login("nobody@stanford.edu", address: "192.0.2.10") }
            _ = try await fixture.login(address: "192.0.2.11")
            let key = Operators.bootstrap.keyId
            _ = try await fixture.store.disableAccount(IdentityOperatorAccountRequest(operatorCall: Operators.call(Operators.bootstrap.text), accountId: account))
            _ = await identityError { try await fixture.login(address: "192.0.2.12") }
            _ = await identityError {
                try await fixture.store.searchAccounts(IdentityAccountSearchRequest(operatorCall: Operators.call(OperatorKeyText.generate().text, address: "203.0.113.5")))
            }

            let mine = try await Self.entries(fixture, accountId: account).reversed().map { ($0.type, $0.actorType, $0.actorId, $0.facts["reason"]) }
            #expect(mine.map(\.0) == [
                "account.created", "signIn.failed", "signIn.succeeded", "account.disabled", "sessions.revoked", "admin.disableAccount", "signIn.failed",
            ])
            #expect(mine[1].3 == "wrongPassword" && mine[1].1 == .account && mine[1].2 == account)
            #expect(mine[6].3 == "accountDisabled")
            #expect(mine[3].1 == .operator && mine[3].2 == key && mine[5].1 == .operator && mine[5].2 == key)
            let failed = try await Self.entries(fixture, type: "signIn.failed")
            let unknown = try #require(failed.first { $0.accountId == nil })
            // No userId is kept for an unknown one (a mistyped userId is someone's address); the client's address is.
            #expect(unknown.facts == ["reason": "unknownUser"] && unknown.actorType == .anonymous && unknown.personal == ["clientAddress": "192.0.2.10"])
            #expect(unknown.operation == "login")
            let signedIn = try #require(try await Self.entries(fixture, type: "signIn.succeeded").first)
            #expect(signedIn.personal == ["clientAddress": "192.0.2.11"] && signedIn.erased == false)
            // A refused key: who tried is not known, where from is.
            let refused = try #require(try await Self.entries(fixture, type: "admin.searchAccounts").first)
            #expect(refused.actorType == .anonymous && refused.facts["outcome"] == "admin.keyRefused" && refused.personal?["clientAddress"] == "203.0.113.5")
            // By the key: everything it did, its reads of the log included.
            let byKey = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: Operators.call(Operators.bootstrap.text), actorId: key)).entries
            #expect(byKey.contains { $0.type == "admin.auditEntries" } && byKey.allSatisfy { $0.actorType == .operator })
            // Everything listed is sealed; the chain verifies.
            #expect(try await Self.entries(fixture).allSatisfy { $0.position != nil })
            let verification = try await Self.verify(fixture)
            #expect(verification.intact && verification.entriesChecked == verification.headPosition && verification.headPosition >= 10)
            #expect(verification.headHash.count == 64 && verification.brokenAt == nil)
        }
    }

    @Test("a throttled storm writes nothing: the attempts the throttle holds are its counts, not one audit row each", arguments: IdentityStorageKind.allCases)
    func throttledStorm(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            _ = try await fixture.signUp()
            // The threshold's failures (3) are each written; from then on the address is held.
            for _ in 0..<3 {
                #expect(await identityError { try await fixture.login(password: "wrong horse", address: "198.51.100.7") }?.code == .wrongCredentials)
            }
            #expect(try await storage.sealAudit(limit: 1_000) >= 0)
            let before = try await Self.entries(fixture, type: "signIn.failed").count
            #expect(before == 3)
            for _ in 0..<50 {
                #expect(await identityError { try await fixture.login(password: "wrong horse", address: "198.51.100.7") }?.code == .throttled)
            }
            #expect(try await Self.entries(fixture, type: "signIn.failed").count == before)
        }
    }

    @Test("pages go newest first with a cursor; filters by time; limits and cursors that are not Konto's are refused; a key without audit:read gets nothing")
    func paging() async throws {
        let fixture = try Operators.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        for index in 0..<5 {
            _ = await identityError { try await fixture.login("user\(index)@stanford.edu", address: "192.0.2.\(index)") }
            fixture.clock.advance(by: .seconds(10))
        }
        let call = Operators.call(Operators.bootstrap.text)
        let first = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: call, type: "signIn.failed", limit: 2))
        #expect(first.entries.count == 2 && first.nextCursor != nil)
        let second = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: call, type: "signIn.failed", cursor: first.nextCursor, limit: 2))
        let third = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: call, type: "signIn.failed", cursor: second.nextCursor, limit: 2))
        let all = (first.entries + second.entries + third.entries)
        #expect(all.count == 5 && third.nextCursor == nil)
        #expect(all.map(\.occurredAt) == all.map(\.occurredAt).sorted(by: >))
        let start = all.last!.occurredAt
        let window = try await fixture.store.auditEntries(IdentityAuditQueryRequest(
            operatorCall: call, type: "signIn.failed", occurredAfter: start.adding(.seconds(10)), occurredBefore: start.adding(.seconds(30))
        ))
        #expect(window.entries.map(\.occurredAt) == [start.adding(.seconds(20)), start.adding(.seconds(10))])
        for bad in [IdentityAuditQueryRequest(operatorCall: call, limit: 0), IdentityAuditQueryRequest(operatorCall: call, limit: 501),
                    IdentityAuditQueryRequest(operatorCall: call, cursor: "abc"), IdentityAuditQueryRequest(operatorCall: call, cursor: "-5"),
                    IdentityAuditQueryRequest(operatorCall: call, type: ""), IdentityAuditQueryRequest(operatorCall: call, accountId: "a\u{0}b")] {
            #expect(await identityError { try await fixture.store.auditEntries(bad) }?.code == .adminInvalidRequest)
        }
        let reader = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: call, name: "reader", scopes: [.accountsRead]))
        #expect(await identityError { try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: Operators.call(reader.secret.value))) }?.code == .adminScopeMissing)
        #expect(await identityError { try await fixture.store.verifyAudit(IdentityAuditVerifyRequest(operatorCall: Operators.call(reader.secret.value))) }?.code == .adminScopeMissing)
        // The refusals themselves are in the log, under the reader's key.
        let refusals = try await fixture.store.auditEntries(IdentityAuditQueryRequest(operatorCall: call, actorId: reader.key.id)).entries
        #expect(refusals.map(\.facts["outcome"]) == ["admin.scopeMissing", "admin.scopeMissing"])
    }

    @Test("a deleted account's entries keep their ids and types but no personal data, and the chain still verifies", arguments: IdentityStorageKind.allCases)
    func erasure(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            let other = try await fixture.signUp("other@stanford.edu")
            _ = try await fixture.login("other@stanford.edu", address: "192.0.2.200")
            let signedUp = try await fixture.signUp()
            _ = await identityError { try await fixture.login(password: "wrong horse", address: "192.0.2.77") }
            let session = try await fixture.login(address: "192.0.2.78")
            _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu", clientAddress: "192.0.2.79"))
            // An operator reads the account: that entry's address is the operator's, and stays.
            _ = try await fixture.store.accountRecord(IdentityOperatorAccountRequest(
                operatorCall: IdentityOperatorCall(key: SecretString(Operators.bootstrap.text), clientAddress: "198.51.100.9"), accountId: signedUp.accountId
            ))
            let before = try await Self.entries(fixture, accountId: signedUp.accountId)
            #expect(before.contains { $0.personal?["userId"] == "leland@stanford.edu" })
            _ = try await fixture.store.delete(IdentityDeleteRequest(token: session.session.token, currentPassword: SecretString("correct horse battery")))
            let after = try await Self.entries(fixture, accountId: signedUp.accountId)
            #expect(after.map(\.type).contains("account.deleted"))
            #expect(Set(before.map(\.id)).isSubset(of: Set(after.map(\.id))))
            let (operatorCalls, own) = (after.filter { $0.type.hasPrefix("admin.") }, after.filter { !$0.type.hasPrefix("admin.") })
            #expect(own.allSatisfy { $0.personal == nil })
            #expect(own.filter(\.erased).count == before.filter { $0.personal != nil && !$0.type.hasPrefix("admin.") }.count)
            #expect(operatorCalls.map(\.type) == ["admin.accountRecord"] && operatorCalls.first?.personal?["clientAddress"] == "198.51.100.9", "\(operatorCalls)")
            // Nothing of it anywhere in the log; another account's entries keep theirs.
            let everything = try await Self.entries(fixture)
            let texts = everything.compactMap(\.personal).flatMap(\.values)
            #expect(!texts.contains { $0.contains("leland") || $0.hasPrefix("192.0.2.7") })
            #expect(everything.contains { $0.accountId == other.accountId && $0.personal?["clientAddress"] == "192.0.2.200" })
            #expect(try await Self.verify(fixture).intact)
        }
    }

    @Test("retention removes the chain's oldest entries up to the first recent one; the rest verifies from the anchor", arguments: IdentityStorageKind.allCases)
    func retention(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.bootstrapOperatorKey = Operators.bootstrap
            options.auditRetention = .seconds(86_400)
            let fixture = try IdentityFixture(storage: storage, options: options)
            try await fixture.store.installBootstrapOperatorKey()
            for index in 0..<4 {
                _ = await identityError { try await fixture.login("old\(index)@stanford.edu", address: "192.0.2.\(index)") }
            }
            await fixture.store.maintainAudit()
            fixture.clock.advance(by: .seconds(86_400 + 1))
            _ = await identityError { try await fixture.login("recent@stanford.edu") }
            await fixture.store.maintainAudit()
            let state = try await storage.auditChainState()
            #expect(state.anchorPosition == 4 && state.headPosition == 5)
            #expect(Self.published(fixture.metrics) == Self.published(state), "the anchor's move is in the metrics")
            let left = try await Self.entries(fixture, type: "signIn.failed")
            #expect(left.count == 1)
            let verification = try await Self.verify(fixture)
            #expect(verification.intact && verification.anchorPosition == 4 && verification.entriesChecked >= 1)
            #expect(state.anchorOccurredAt != nil)

            // Someone who can write to the database removes the newest entries too and moves the anchor past them, as
            // retention would: the chain still links, but it starts after an entry younger than the retention.
            _ = try await storage.pruneAudit(before: fixture.clock.now.adding(.seconds(1)), limit: 100)
            let moved = try await Self.verify(fixture)
            #expect(!moved.intact && moved.problem?.contains("younger than the retention") == true, "\(moved)")
        }
    }

    @Test("the chain's head is written to the log (position and hash) when it moved, at most once an interval, and to the metrics", arguments: IdentityStorageKind.allCases)
    func headInTheLog(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let lines = LogLines()
            var options = IdentityOptions()
            options.bootstrapOperatorKey = Operators.bootstrap
            options.auditHeadLogInterval = .seconds(600)
            let fixture = try IdentityFixture(storage: storage, options: options, logger: Logger(label: "test.audit") { _ in lines })
            try await fixture.store.installBootstrapOperatorKey()
            _ = await identityError { try await fixture.login("head@stanford.edu") }
            await fixture.store.maintainAudit()
            let head = try await storage.auditChainState()
            #expect(lines.heads == [AuditChain.hex(head.headHash)], "\(lines.heads)")
            #expect(Self.published(fixture.metrics) == Self.published(head), "the metrics carry the head the log names")
            #expect(head.headPosition > 0)
            // Within the interval: not again; after it, only once the head moved.
            _ = await identityError { try await fixture.login("head@stanford.edu") }
            await fixture.store.maintainAudit()
            #expect(lines.heads.count == 1)
            fixture.clock.advance(by: .seconds(601))
            await fixture.store.maintainAudit()
            let movedState = try await storage.auditChainState()
            let moved = AuditChain.hex(movedState.headHash)
            #expect(lines.heads.count == 2 && lines.heads.last == moved)
            #expect(Self.published(fixture.metrics) == Self.published(movedState))
            fixture.clock.advance(by: .seconds(601))
            await fixture.store.maintainAudit()
            #expect(lines.heads.count == 2, "unchanged: not written again")
        }
    }

    /// The head as the metrics show it: position, fingerprint, anchor (nil where a sample is missing).
    static func published(_ metrics: IdentityMetrics) -> [Double?] {
        published(String(decoding: metrics.exposition(), as: UTF8.self))
    }

    /// The head in a Prometheus text exposition.
    static func published(_ text: String) -> [Double?] {
        ["konto_audit_chain_head_position", "konto_audit_chain_head_fingerprint", "konto_audit_chain_anchor_position"].map { name in
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
    }

    /// What the metrics should show for `state`: the fingerprint is the first 12 hex digits of the logged hash.
    static func published(_ state: AuditChainState) -> [Double?] {
        [Double(state.headPosition), Double(UInt64(AuditChain.hex(state.headHash).prefix(12), radix: 16) ?? 0), Double(state.anchorPosition)]
    }

    /// The hashes of the "audit chain head" lines a logger wrote.
    final class LogLines: LogHandler, @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [String] = []
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        var heads: [String] { lock.withLock { recorded } }
        func log(event: LogEvent) {
            guard event.message.description == "audit chain head", case .string(let hash)? = event.metadata?["konto.audit_head_hash"] else { return }
            lock.withLock { recorded.append(hash) }
        }
    }

    @Test("entries appended from many threads while two sealers run are each sealed once, in one unbroken chain", arguments: IdentityStorageKind.allCases)
    func concurrentSealing(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            let writers = 8
            let perWriter = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<perWriter {
                            try await storage.appendAudit([AuditRecord(
                                occurredAt: .now, accountId: "acct-\(writer)", actorType: .system, actorId: nil, type: "test.entry", operation: nil,
                                facts: ["index": "\(index)"], personal: ["clientAddress": "198.51.100.\(writer)"]
                            )])
                        }
                    }
                }
                for _ in 0..<2 {
                    group.addTask {
                        for _ in 0..<30 { _ = try await storage.sealAudit(limit: 25) }
                    }
                }
                try await group.waitForAll()
            }
            let verification = try await Self.verify(fixture)
            #expect(verification.intact && verification.headPosition == Int64(writers * perWriter) && verification.entriesChecked == verification.headPosition)
            let chain = try await storage.auditChain(after: 0, limit: 10_000)
            #expect(chain.count == writers * perWriter && Set(chain.map(\.record.id)).count == chain.count)
        }
    }

    @Test("an operator's reset mail: the owner's link that works, within the operators' hourly allowance; refused openly for an unknown, anonymous or disabled account; audited under the key")
    func operatorReset() async throws {
        let fixture = try Operators.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        let call = Operators.call(Operators.bootstrap.text)
        let account = try await fixture.signUp().accountId
        _ = try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: account))
        let mails = try await IdentityStoreMailTests.mails(fixture).filter { $0.accountId == account && $0.request.message == .passwordReset }
        #expect(mails.count == 1 && mails.first?.request.to == "leland@stanford.edu")
        let token = try #require(try await fixture.events().compactMap { event -> String? in
            if case .passwordResetRequested(_, let token, _) = event.kind { try? IdentityFixture.seal.open(token, accountId: event.accountId) } else { nil }
        }.last)
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("a new horse battery")))
        _ = try await fixture.login(password: "a new horse battery")
        // Three an hour from operators; the fourth is refused with its wait.
        for _ in 0..<2 { _ = try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: account)) }
        let flood = await identityError { try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: account)) }
        #expect(flood?.code == .throttled && (flood?.retryAfterSeconds ?? 0) > 0)
        // The owner's own request is not held by the operators' allowance.
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        #expect(try await IdentityStoreMailTests.mails(fixture).filter { $0.request.message == .passwordReset }.count == 4)
        let unknown = await identityError { try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: "nobody")) }
        #expect(unknown?.code == .notFound)
        let guest = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let anonymous = await identityError { try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: guest.accountId)) }
        #expect(anonymous?.code == .adminInvalidRequest)
        let other = try await fixture.signUp("other@stanford.edu").accountId
        _ = try await fixture.store.disableAccount(IdentityOperatorAccountRequest(operatorCall: call, accountId: other))
        let disabled = await identityError { try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: call, accountId: other)) }
        #expect(disabled?.code == .adminInvalidRequest)
        let reader = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: call, name: "reader", scopes: [.accountsRead]))
        let scope = await identityError { try await fixture.store.sendPasswordReset(IdentityOperatorAccountRequest(operatorCall: Operators.call(reader.secret.value), accountId: account)) }
        #expect(scope?.code == .adminScopeMissing)
        let audited = try await Self.entries(fixture, accountId: account, type: "passwordReset.requested")
        #expect(audited.count == 4 && audited.filter { $0.actorType == .operator && $0.actorId == Operators.bootstrap.keyId }.count == 3)
    }

    @Test("the help desk removes a factor the owner lost: the owner is mailed, the sign-in asks no second step, the audit names the key; another account's factor is not found; factors:write is needed")
    func operatorRemovesFactor() async throws {
        let fixture = try Operators.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        let call = Operators.call(Operators.bootstrap.text)
        let (signedUp, _, factorId) = try await IdentityStoreFactorTests.enrolled(fixture)
        #expect(try await fixture.loginAnswer().challenge != nil)
        let other = try await fixture.signUp("other@stanford.edu").accountId
        let foreign = await identityError {
            try await fixture.store.removeAccountFactor(IdentityAccountFactorRequest(operatorCall: call, accountId: other, factorId: factorId))
        }
        #expect(foreign?.code == .factorNotFound)
        let reader = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: call, name: "reader", scopes: [.accountsRead, .accountsWrite]))
        let scope = await identityError {
            try await fixture.store.removeAccountFactor(IdentityAccountFactorRequest(operatorCall: Operators.call(reader.secret.value), accountId: signedUp.accountId, factorId: factorId))
        }
        #expect(scope?.code == .adminScopeMissing)
        let removed = try await fixture.store.removeAccountFactor(IdentityAccountFactorRequest(operatorCall: call, accountId: signedUp.accountId, factorId: factorId))
        #expect(removed.remainingFactors == 0)
        #expect(try await IdentityStoreMailTests.mails(fixture).contains { $0.accountId == signedUp.accountId && $0.request.message == .factorRemoved })
        #expect(try await fixture.loginAnswer().accountSession != nil)
        let again = await identityError {
            try await fixture.store.removeAccountFactor(IdentityAccountFactorRequest(operatorCall: call, accountId: signedUp.accountId, factorId: factorId))
        }
        #expect(again?.code == .factorNotFound)
        let audited = try #require(try await Self.entries(fixture, accountId: signedUp.accountId, type: "factor.removed").first)
        #expect(audited.actorType == .operator && audited.actorId == Operators.bootstrap.keyId && audited.facts["factorId"] == factorId)
    }
}

