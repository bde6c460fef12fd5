import Foundation
import KontoTestSupport
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

    /// Erasure: sign up with a marker in the userId and the name, change the details, ask for a reset, delete. Once
    /// the deletion has reached every group (Notifications sweeps every 200 ms here), no row of any table of any
    /// schema holds the marker.
    static func erasure(_ http: RawHTTP, system: EndToEndSystem) async throws {
        let marker = "erasure" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
        let userId = "\(marker)@example.org"
        let signUp = try await http.send("POST", "/v1/accounts", json: [
            "userId": userId, "password": AttackTests.password,
            "details": ["name": ["givenName": marker, "familyName": "Lovelace"], "handle": String(marker.prefix(20))],
        ])
        #expect(signUp.status == 201, "\(String(decoding: signUp.body, as: UTF8.self))")
        let login = try await http.send("POST", "/v1/sessions", json: ["userId": userId, "password": AttackTests.password])
        let token = try #require(login.token)
        let changed = try await http.send("PATCH", "/v1/account", json: ["set": ["name": ["givenName": "Changed", "familyName": marker]]], token: token)
        #expect(changed.status == 200, "\(String(decoding: changed.body, as: UTF8.self))")
        #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": userId]).status == 202)
        _ = try await system.resetToken(for: userId)
        // The search sees the marker while the account lives: in Identity, Profile and the events at least.
        let before = try await system.tablesContaining(marker)
        for table in ["identity.credentials", "profile.accounts", "notifications.events"] {
            #expect(before.contains { $0.hasPrefix(table + ":") }, "\(table) in \(before)")
        }
        let deleted = try await http.send("DELETE", "/v1/account", token: token)
        #expect(deleted.status == 204, "\(String(decoding: deleted.body, as: UTF8.self))")
        var left: [String] = []
        try await EndToEndSystem.waitUntil(within: .seconds(30), "the deleted account's marker gone from every table") {
            left = try await system.tablesContaining(marker)
            return left.isEmpty
        }
        #expect(left == [])
        // What stays is the deletion itself, by account id only.
        let events = try await system.strings("SELECT type FROM notifications.events WHERE account_id = '\(try #require(signUp.json?["accountId"] as? String))'")
        #expect(events == ["deletingAccount"])
    }
}
