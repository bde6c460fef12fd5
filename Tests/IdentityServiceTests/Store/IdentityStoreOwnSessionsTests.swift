import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// The owner's sessions and devices: `identity.listSessions`, `endSession`, `endOtherSessions`, on both storages.
@Suite("Identity: the owner's sessions and devices")
struct IdentityStoreOwnSessionsTests {
    static func token(_ session: IdentityAccountSession) -> BearerToken { session.session.token }

    static func login(_ fixture: IdentityFixture, address: String?, name: String?) async throws -> IdentityAccountSession {
        let answer = try await fixture.store.login(IdentityLoginRequest(
            userId: "leland@stanford.edu", password: SecretString("correct horse battery"), clientAddress: address, clientName: name
        ))
        return try #require(answer.accountSession)
    }

    static func list(_ fixture: IdentityFixture, _ session: IdentityAccountSession) async throws -> [IdentityAccountSessionSummary] {
        try await fixture.store.listSessions(IdentitySessionRequest(token: token(session))).sessions
    }

    @Test("the list: every live session oldest first, how it signed in, the client's network and cleaned name, the caller's marked; last use moves with use; a reauthentication's fresh session keeps its client", arguments: IdentityStorageKind.allCases)
    func list(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.sessionTouchInterval = .seconds(60)
            let fixture = try IdentityFixture(storage: storage, options: options)
            let signedUp = try await fixture.signUp()
            fixture.clock.advance(by: .seconds(10))
            let phone = try await Self.login(fixture, address: "203.0.113.77", name: "Konto/1.0\n(iPhone;\u{200B} iOS 19)\t  phone")
            fixture.clock.advance(by: .seconds(10))
            let laptop = try await Self.login(fixture, address: "2001:db8:1:2::/64", name: String(repeating: "é", count: 400))
            // Another account's sessions are never listed.
            _ = try await fixture.signUp("other@stanford.edu")

            let listed = try await Self.list(fixture, phone)
            #expect(listed.map(\.signInMethod) == ["signUp", "password", "password"])
            #expect(listed.map(\.current) == [false, true, false])
            #expect(listed.map(\.clientAddress) == [nil, "203.0.113.0/24", "2001:db8:1::/48"])
            #expect(listed[1].clientName == "Konto/1.0 (iPhone; iOS 19) phone")
            #expect(listed[2].clientName == String(repeating: "é", count: 256))
            #expect(listed.map(\.lastUsedAt) == listed.map(\.createdAt))
            #expect(listed.allSatisfy { $0.assuranceLevel == 1 })
            let encoded = String(decoding: try JSONEncoder().encode(IdentityAccountSessions(sessions: listed)), as: UTF8.self)
            for session in [signedUp, phone, laptop] {
                #expect(!encoded.contains(Self.token(session).value))
            }

            // Used after the touch interval: its last use moves; the others' do not.
            fixture.clock.advance(by: .seconds(120))
            _ = try await fixture.validate(Self.token(laptop))
            let touched = try await Self.list(fixture, laptop)
            #expect(touched[2].lastUsedAt == fixture.clock.now)
            #expect(touched[1].lastUsedAt == listed[1].lastUsedAt)
            #expect(touched.map(\.current) == [false, false, true])

            // A reauthentication replaces the token; the session keeps how and from where it signed in.
            let privilege = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: Self.token(phone), password: SecretString("correct horse battery")))
            let fresh = try #require(privilege.session)
            let after = try await fixture.store.listSessions(IdentitySessionRequest(token: fresh.token)).sessions
            let replaced = try #require(after.first { $0.current == true })
            #expect(replaced.id != listed[1].id)
            #expect(replaced.signInMethod == "password" && replaced.clientAddress == "203.0.113.0/24" && replaced.clientName == listed[1].clientName)
            #expect(after.count == 3)

            // The operator's view has the same, without `current`.
            let stored = try #require(try await storage.accountSessions(accountId: signedUp.accountId))
            #expect(stored.map { $0.summary().clientAddress } == after.map(\.clientAddress))
        }
    }

    @Test("ending a session: the caller's own as a logout; another only with a privileged window or the password; another account's, an unknown or an expired one is not found; none changes anything", arguments: IdentityStorageKind.allCases)
    func endOne(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.privilegedWindow = .seconds(60)
            options.sessionIdleTimeout = .seconds(3_600)
            let fixture = try IdentityFixture(storage: storage, options: options)
            let first = try await fixture.signUp()
            let second = try await Self.login(fixture, address: "192.0.2.10", name: "second")
            let stranger = try await fixture.signUp("other@stanford.edu")
            let strangersId = try await fixture.validate(Self.token(stranger)).sessionId
            let secondId = try await fixture.validate(Self.token(second)).sessionId
            fixture.clock.advance(by: .seconds(61))

            func end(_ caller: IdentityAccountSession, _ id: String, password: String? = nil) async -> ServiceError? {
                await identityError {
                    try await fixture.store.endSession(IdentityEndSessionRequest(token: Self.token(caller), sessionId: id, currentPassword: password.map(SecretString.init)))
                }
            }
            // Outside the window: another session needs the password; a wrong one is refused.
            #expect(await end(first, secondId)?.code == AccountError.Code.reauthenticationRequired)
            #expect(await end(first, secondId, password: "wrong password")?.code == AccountError.Code.wrongCredentials)
            // Another account's session is not found, exactly as a made-up id (it is not told apart).
            let foreign = await end(first, strangersId, password: "correct horse battery")
            let unknown = await end(first, "00000000-0000-4000-8000-000000000000", password: "correct horse battery")
            #expect(foreign?.code == AccountError.Code.sessionNotFound)
            #expect(foreign == unknown)
            #expect(await end(first, String(repeating: "a", count: 65))?.code == AccountError.Code.sessionNotFound)
            #expect(try await fixture.validate(Self.token(stranger)).sessionId == strangersId)
            #expect(try await Self.list(fixture, first).count == 2)

            let eventsBefore = try await fixture.events().count
            #expect(await end(first, secondId, password: "correct horse battery") == nil)
            #expect(await identityError { try await fixture.validate(Self.token(second)) }?.code == AccountError.Code.unauthenticated)
            #expect(try await fixture.events().dropFirst(eventsBefore).map(\.kind.name) == ["disassociatingAccount"])
            #expect(await end(first, secondId, password: "correct horse battery")?.code == AccountError.Code.sessionNotFound)

            // The caller's own: a logout, no password.
            let firstId = try await fixture.validate(Self.token(first)).sessionId
            #expect(await end(first, firstId) == nil)
            #expect(await identityError { try await fixture.validate(Self.token(first)) }?.code == AccountError.Code.unauthenticated)

            // An expired session is not live: not found, though its row may wait for the clean-up.
            let third = try await Self.login(fixture, address: nil, name: nil)
            let fourth = try await Self.login(fixture, address: nil, name: nil)
            let thirdId = try await fixture.validate(Self.token(third)).sessionId
            fixture.clock.advance(by: .seconds(3_000))
            _ = try await fixture.validate(Self.token(fourth))
            fixture.clock.advance(by: .seconds(700))
            #expect(await end(fourth, thirdId, password: "correct horse battery")?.code == AccountError.Code.sessionNotFound)
            #expect(try await Self.list(fixture, fourth).count == 1)
        }
    }

    @Test("ending every other session keeps the caller's and is security-related (the password outside the window, a wrong one refused); nothing left, nothing written", arguments: IdentityStorageKind.allCases)
    func endOthers(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.privilegedWindow = .seconds(60)
            let fixture = try IdentityFixture(storage: storage, options: options)
            let first = try await fixture.signUp()
            let others = [try await Self.login(fixture, address: nil, name: "a"), try await Self.login(fixture, address: nil, name: "b")]
            fixture.clock.advance(by: .seconds(61))
            func endOthers(_ password: String?) async -> ServiceError? {
                await identityError {
                    try await fixture.store.endOtherSessions(IdentitySecuredRequest(token: Self.token(first), currentPassword: password.map(SecretString.init)))
                }
            }
            #expect(await endOthers(nil)?.code == AccountError.Code.reauthenticationRequired)
            #expect(await endOthers("wrong password")?.code == AccountError.Code.wrongCredentials)
            #expect(try await Self.list(fixture, first).count == 3)
            let eventsBefore = try await fixture.events().count
            let ended = try await fixture.store.endOtherSessions(IdentitySecuredRequest(token: Self.token(first), currentPassword: SecretString("correct horse battery")))
            #expect(ended.sessionsEnded == 2 && ended.eventIds?.count == 2)
            #expect(try await fixture.events().dropFirst(eventsBefore).map(\.kind.name) == ["sessionsRevoked", "disassociatingAccount"])
            for other in others {
                #expect(await identityError { try await fixture.validate(Self.token(other)) }?.code == AccountError.Code.unauthenticated)
            }
            #expect(try await Self.list(fixture, first).map(\.current) == [true])
            // Nothing left to end: nothing written.
            let none = try await fixture.store.endOtherSessions(IdentitySecuredRequest(token: Self.token(first), currentPassword: SecretString("correct horse battery")))
            #expect(none.sessionsEnded == 0 && none.eventIds == nil)
        }
    }

    @Test("two sessions ending the same third at once, many rounds on real threads: one ends it, the other is told it is not found; never both", arguments: IdentityStorageKind.allCases)
    func concurrentEnds(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            _ = try await fixture.signUp()
            for _ in 0..<25 {
                let a = try await Self.login(fixture, address: nil, name: nil)
                let b = try await Self.login(fixture, address: nil, name: nil)
                let target = try await Self.login(fixture, address: nil, name: nil)
                let targetId = try await fixture.validate(Self.token(target)).sessionId
                let outcomes = await withTaskGroup(of: KontoErrorCode?.self) { group in
                    for caller in [a, b] {
                        group.addTask {
                            await identityError {
                                try await fixture.store.endSession(IdentityEndSessionRequest(token: Self.token(caller), sessionId: targetId))
                            }?.code
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
                #expect(outcomes.filter { $0 == AccountError.Code.sessionNotFound }.count == 1, "\(outcomes)")
                _ = try await fixture.store.logout(IdentitySessionRequest(token: Self.token(a)))
                _ = try await fixture.store.logout(IdentitySessionRequest(token: Self.token(b)))
            }
        }
    }

    @Test("a client's network: IPv4 /24, IPv6 /48 (a mapped IPv4 as IPv4); anything else nothing")
    func coarseAddresses() {
        #expect(SessionClient.coarse(address: "203.0.113.77") == "203.0.113.0/24")
        #expect(SessionClient.coarse(address: "2001:db8:abcd:12::1") == "2001:db8:abcd::/48")
        #expect(SessionClient.coarse(address: "2001:db8:abcd:12::/64") == "2001:db8:abcd::/48")
        #expect(SessionClient.coarse(address: "::ffff:198.51.100.9") == "198.51.100.0/24")
        for other in [nil, "", "localhost", "127.1", "1.2.3", "999.1.1.1", "not:an:address::x", String(repeating: "1", count: 80)] {
            #expect(SessionClient.coarse(address: other) == nil, "\(other ?? "nil")")
        }
    }

    @Test("a client's name: white space made single spaces, control and invisible characters dropped, at most 256 characters")
    func names() {
        #expect(SessionClient.name("  Mozilla/5.0\r\n(X11;\u{0}\u{7} Linux)\u{200E} ") == "Mozilla/5.0 (X11; Linux)")
        #expect(SessionClient.name(String(repeating: "x", count: 1_000))?.count == 256)
        #expect(SessionClient.name(String(repeating: "👩‍💻", count: 300))?.unicodeScalars.count == 256)
        #expect(SessionClient.name("\u{1}\u{2}\n\t ") == nil)
        #expect(SessionClient.name(nil) == nil)
    }
}
