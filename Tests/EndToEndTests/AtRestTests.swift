import Foundation
import KontoTesting
import Testing

/// What the running system keeps (issue 28): searched in every table of every schema and in every log line.
@Suite("At rest", .serialized, .timeLimit(.minutes(5)))
struct AtRestTests {
    @Test("no secret at rest: after a reset request and its delivery, no table and no log line holds the token")
    func noSecretAtRest() async throws {
        try await EndToEndSystem.with(environment: ["KONTO_LOG_LEVEL": "debug"]) { system in
            let http = RawHTTP(system: system)
            let userId = "rest@example.org"
            _ = try await http.signUp(userId: userId, password: AttackTests.password)
            #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": userId]).status == 202)
            // Delivered: the mailer has it, so it went through Identity's outbox and Notifications' store.
            let token = try await system.resetToken(for: userId)
            #expect(token.utf8.count >= 32)
            let tables = try await system.allTables()
            #expect(tables.contains { $0.schema == "notifications" && $0.table == "events" }, "\(tables)")
            #expect(tables.contains { $0.schema == "identity" }, "\(tables)")
            #expect(try await system.tablesContaining(token) == [])
            #expect(!system.logs().contains(token))
            // The search finds what is there: the userId is stored (in Identity's credentials, at least).
            #expect(try await system.tablesContaining(userId).isEmpty == false)
        }
    }
}
