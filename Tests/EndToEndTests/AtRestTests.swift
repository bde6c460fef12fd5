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
        try await secondFactorsAtRest(http, system: system)
    }

    /// No second factor's secret at rest: an authenticator app's secret (as base32 and as its bytes), the recovery
    /// codes, and a passkey's public key (its coordinates, in hex and base64url) are in no table and no log line.
    static func secondFactorsAtRest(_ http: RawHTTP, system: EndToEndSystem) async throws {
        let app = try await http.signUp(userId: "rest.totp@example.org", password: AttackTests.password)
        let enrolment = try #require(try await http.send("POST", "/v1/account/factors/totp", token: app.token).json)
        let secret = try #require(enrolment["secret"] as? String)
        let factorId = try #require(enrolment["factorId"] as? String)
        let code = try #require(TOTPTestCode.code(base32Secret: secret))
        #expect(try await http.send("POST", "/v1/account/factors/totp/\(factorId)/confirm", json: ["code": code], token: app.token).status == 200)
        // Recovery codes need a window opened with the second factor.
        let reauthenticated = try await http.send("POST", "/v1/account/reauthenticate", json: ["code": try #require(TOTPTestCode.code(base32Secret: secret, offset: 1))], token: app.token)
        let strong = try #require((reauthenticated.json?["session"] as? [String: Any])?["token"] as? String)
        let codes = try #require(try await http.send("POST", "/v1/account/recovery-codes", token: strong).json?["codes"] as? [String])
        #expect(codes.count == 10)

        let owner = try await http.signUp(userId: "rest.passkey@example.org", password: AttackTests.password)
        let authenticator = SoftwareAuthenticator(rpId: "localhost", origin: system.gatewayURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        let options = try #require(try await http.send("POST", "/v1/account/factors/passkeys/options", token: owner.token).json)
        let credential = authenticator.registrationJSON(challenge: try #require(options["challenge"] as? String))
        let registered = try await http.send("POST", "/v1/account/factors/passkeys", json: ["credential": credential], token: owner.token)
        #expect(registered.status == 201, "\(String(decoding: registered.body, as: UTF8.self))")

        let key = TOTPTestCode.decode(base32: secret) ?? []
        guard case .map(let entries) = authenticator.publicKey else { Issue.record("the COSE key is not a map"); return }
        let coordinates = entries.compactMap { entry -> [UInt8]? in if case .bytes(let bytes) = entry.1, bytes.count == 32 { bytes } else { nil } }
        #expect(coordinates.count == 2)
        var needles = [secret, Self.hex(key)] + codes
        for coordinate in coordinates { needles += [Self.hex(coordinate), SoftwareAuthenticator.base64URL(coordinate)] }
        let logs = system.logs()
        for needle in needles {
            #expect(try await system.tablesContaining(needle) == [], "a second factor's secret at rest")
            #expect(!logs.contains(needle), "a second factor's secret in a log line")
        }
        // The search finds what is there: the passkey's credential ID is stored, in the clear (it is not secret).
        #expect(try await system.tablesContaining(Self.hex(authenticator.credentialId)).isEmpty == false)
    }

    /// Every row holding `marker`, table by table, is in the account's export (`GET /v1/account/export`) under the
    /// key that names it; a table this does not know is a place the export does not show, and fails. Repeated while
    /// the outbox relays (a row then moves from Identity's outbox to Notifications' events), for at most 30 s.
    static func exportRepresents(_ marker: String, token: String, _ http: RawHTTP, system: EndToEndSystem) async throws {
        var missing: [String] = []
        try await EndToEndSystem.waitUntil(within: .seconds(30), "every row holding the account's marker represented in its export") {
            let rows = try await system.rowsContaining(marker)
            let answer = try await http.send("GET", "/v1/account/export", token: token)
            guard answer.status == 200, let export = answer.json else {
                missing = ["the export answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))"]
                return false
            }
            missing = rows.compactMap { table, row in Self.represents(export, table: table, row: row) ? nil : "\(table): \(row)" }
            return !rows.isEmpty && missing.isEmpty
        }
        #expect(missing == [])
    }

    /// Whether the export shows `row` of `table`: by its id in the section that lists such rows.
    static func represents(_ export: [String: Any], table: String, row: [String: Any]) -> Bool {
        func ids(_ list: Any?, _ key: String = "id") -> Set<String> {
            Set(((list as? [[String: Any]]) ?? []).compactMap { ($0[key] as? String)?.lowercased() })
        }
        let events = ids((export["events"] as? [String: Any])?["entries"])
        let credential = export["credential"] as? [String: Any] ?? [:]
        let text = { (key: String) in (row[key] as? String)?.lowercased() ?? "" }
        switch table {
        case "identity.credentials":
            return text("account_id") == (credential["accountId"] as? String)?.lowercased() && row["user_id"] as? String == credential["userId"] as? String
        case "identity.sessions": return ids(export["sessions"]).contains(text("id"))
        case "identity.audit_log": return ids((export["audit"] as? [String: Any])?["entries"]).contains(text("entry_id"))
        case "identity.email_verifications":
            return ids((export["verification"] as? [String: Any])?["pending"], "address").contains(text("address"))
        case "identity.factors": return ids(export["factors"]).contains(text("id"))
        case "identity.external_identities": return ids(export["identities"]).contains(text("id"))
        case "identity.outbox", "notifications.events": return events.contains(text("event_id"))
        case "profile.accounts": return text("account_id") == ((export["account"] as? [String: Any])?["accountId"] as? String)?.lowercased()
        default: return false
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
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
        // The client's name a session keeps for its owner's list is personal too: the marker as the User-Agent.
        let login = try await http.send("POST", "/v1/sessions", json: ["userId": userId, "password": AttackTests.password], headers: [("User-Agent", "Phone of \(marker)")])
        let token = try #require(login.token)
        let changed = try await http.send("PATCH", "/v1/account", json: ["set": ["name": ["givenName": "Changed", "familyName": marker]]], token: token)
        #expect(changed.status == 200, "\(String(decoding: changed.body, as: UTF8.self))")
        #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": userId]).status == 202)
        _ = try await system.resetToken(for: userId)
        // The search sees the marker while the account lives: in Identity, Profile and the events at least.
        let before = try await system.tablesContaining(marker)
        // The audit log holds the reset's userId among its personal data, erased with the account.
        for table in ["identity.credentials", "identity.sessions", "identity.audit_log", "profile.accounts", "notifications.events"] {
            #expect(before.contains { $0.hasPrefix(table + ":") }, "\(table) in \(before)")
        }
        // The owner's copy of their data shows every row the search finds (the events relayed meanwhile included).
        try await Self.exportRepresents(marker, token: token, http, system: system)
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
