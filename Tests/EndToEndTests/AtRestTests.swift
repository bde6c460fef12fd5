import Foundation
import KontoTesting
import Testing

/// What the running system keeps (issue 28): searched in every table of every schema and in every log line. Run
/// inside AttackTests' system (see there).
enum AtRestTests {
    /// No secret at rest: after a reset request and its delivery, no table and no log line holds the token.
    static func noSecretAtRest(_ http: RawHTTP, system: EndToEndSystem) async throws {
        let userId = "rest@example.org"
        _ = try await http.signUp(userId: userId, password: AttackTests.password)
        #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": userId]).status == 202)
        // Delivered: the mailer has it, so it went through Identity's outbox and Notifications' store.
        let token = try await system.resetToken(for: userId)
        #expect(token.utf8.count >= 32)
        let tables = try await system.allTables()
        #expect(tables.contains { $0.schema == "notifications" && $0.table == "events" }, "\(tables)")
        #expect(tables.contains { $0.schema == "identity" }, "\(tables)")
        #expect(try await system.tablesContaining(token) == [], "a reset token at rest")
        #expect(!system.logs().contains(token), "a reset token in a log line")
        // The search finds what is there: the userId is stored (in Identity's credentials, at least).
        #expect(try await system.tablesContaining(userId).isEmpty == false)
    }
}
