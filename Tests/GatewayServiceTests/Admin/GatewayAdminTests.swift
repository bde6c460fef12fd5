import AsyncHTTPClient
import Foundation
@testable import GatewayService
import IdentityService
import KontoContracts
import KontoTesting
import KontoTestSupport
import NIOHTTP1
import Testing

/// The admin API on its own listener (docs/ADMIN.md), in front of the real services on PostgreSQL: operator keys,
/// account search and records; the attacker's view (no key, a wrong key, a key without the scope, the public
/// listener).
@Suite("Gateway admin API", .timeLimit(.minutes(4)))
struct GatewayAdminTests {
    static let bootstrap = OperatorKeyText.generate()

    static func identityOptions(threshold: Int = 5) -> IdentityOptions {
        var options = IdentityOptions()
        options.bootstrapOperatorKey = bootstrap
        options.throttle = ThrottlePolicy(threshold: threshold, baseDelay: .seconds(60))
        return options
    }

    static func withAdmin<Result: Sendable>(
        threshold: Int = 5, _ body: @escaping @Sendable (_ running: GatewayHarness.Running, _ admin: GatewayHarness.Running) async throws -> Result
    ) async throws -> Result {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: identityOptions(threshold: threshold)) { running in
            var admin = running
            admin.baseURL = try #require(running.adminURL)
            return try await body(running, admin)
        }
    }

    /// Every (method, path) of the admin API, its path parameters filled in.
    static var adminRoutes: [(HTTPMethod, String)] {
        OpenAPIDocument.methods.filter { OpenAPIDocument.isAdminPath($0.key) }.sorted { $0.key < $1.key }.flatMap { path, methods in
            methods.map {
                (HTTPMethod(rawValue: $0), path.replacingOccurrences(of: "{keyId}", with: "abc").replacingOccurrences(of: "{accountId}", with: "abc")
                    .replacingOccurrences(of: "{sessionId}", with: "abc").replacingOccurrences(of: "{factorId}", with: "abc")
                    .replacingOccurrences(of: "{identityId}", with: "abc"))
            }
        }
    }

    @Test("the public listener serves no admin route and no admin document; the admin listener serves nothing else")
    func listenersApart() async throws {
        try await Self.withAdmin { running, admin in
            let key = Self.bootstrap.text
            #expect(Self.adminRoutes.count >= 5)
            for (method, path) in Self.adminRoutes {
                let answer = try await running.request(method, path, json: method == .POST ? #"{"name":"x","scopes":["accounts:read"]}"# : nil, token: key)
                #expect(answer.status == 404 && answer.code == "request.notFound", "\(method) \(path): \(answer.status) \(answer.text)")
                // On the admin listener each is there (a refusal of its input at most, never 404 for the route).
                let served = try await admin.request(method, path, json: method == .POST ? #"{"name":"x","scopes":["accounts:read"]}"# : nil, token: key)
                // (A path naming an unknown account or key answers that one's not-found code, never the route's.)
                #expect(served.code != "request.notFound", "\(method) \(path): \(served.status) \(served.text)")
            }
            let document = try JSONSerialization.jsonObject(with: try await running.request(.GET, "/openapi.json").body) as? [String: Any]
            let publicPaths = (document?["paths"] as? [String: Any])?.keys.map { $0 } ?? []
            #expect(!publicPaths.isEmpty && !publicPaths.contains { $0.hasPrefix("/admin") })
            #expect(!(try await running.request(.GET, "/openapi.json").text.contains("operatorKey")))
            #expect(try await running.request(.GET, "/admin/v1/openapi.json").status == 404)
            let adminDocument = try JSONSerialization.jsonObject(with: try await admin.request(.GET, "/admin/v1/openapi.json").body) as? [String: Any]
            let adminPaths = (adminDocument?["paths"] as? [String: Any])?.keys.map { $0 } ?? []
            #expect(Set(adminPaths) == Set(OpenAPIDocument.paths.filter(OpenAPIDocument.isAdminPath)))
            // The admin listener is not a second public API.
            let signUp = try await admin.request(.POST, "/v1/accounts", json: #"{"userId":"x@example.org","password":"correct horse battery"}"#)
            #expect(signUp.status == 404)
            #expect(try await admin.request(.GET, "/v1/account", token: key).status == 404)
        }
    }

    @Test("keys: made with scopes among the maker's, shown once, listed without secrets, revoked; a revoked key is refused")
    func keys() async throws {
        try await Self.withAdmin { _, admin in
            let root = Self.bootstrap.text
            let made = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"help desk","scopes":["accounts:read","keys:write"]}"#, token: root)
            #expect(made.status == 201, "\(made.text)")
            let secret = try #require(made.object["secret"] as? String)
            let keyId = try #require((made.object["key"] as? [String: Any])?["id"] as? String)
            #expect(OperatorKeyText(parsing: secret)?.keyId == keyId)
            // No key makes a stronger one; nothing is made.
            let escalation = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"root","scopes":["accounts:write"]}"#, token: secret)
            #expect(escalation.status == 422 && escalation.code == "admin.invalidRequest", "\(escalation.text)")
            let listed = try await admin.request(.GET, "/admin/v1/keys", token: secret)
            #expect(listed.status == 200)
            let keys = try #require(listed.object["keys"] as? [[String: Any]])
            #expect(keys.count == 2 && keys.map { $0["name"] as? String } == ["bootstrap", "help desk"])
            #expect(!listed.text.contains(secret) && !listed.text.contains(root) && !listed.text.lowercased().contains("hash"))
            #expect(try await admin.request(.DELETE, "/admin/v1/keys/\(keyId)", token: root).status == 204)
            let refused = try await admin.request(.GET, "/admin/v1/keys", token: secret)
            #expect(refused.status == 401 && refused.code == "admin.keyRefused")
            let again = try await admin.request(.GET, "/admin/v1/keys", token: root)
            #expect(((again.object["keys"] as? [[String: Any]])?.last?["revokedAt"] as? String) != nil)
            #expect(try await admin.request(.DELETE, "/admin/v1/keys/ffffffffffffffffffffffffffffffff", token: root).code == "admin.keyNotFound")
        }
    }

    @Test("accounts: a case-insensitive substring search in pages, and an account's record with its details; never a secret")
    func accounts() async throws {
        try await Self.withAdmin { running, admin in
            var signedUp: [String: (token: String, accountId: String)] = [:]
            for name in ["ada", "grace", "alan", "barbara"] {
                signedUp[name] = try await running.signUp("\(name)@Lab.example.org")
            }
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: Self.bootstrap.text)
            let key = try #require(reader.object["secret"] as? String)
            let first = try await admin.request(.GET, "/admin/v1/accounts?userIdContains=LAB.EXAMPLE&limit=3", token: key)
            #expect(first.status == 200, "\(first.text)")
            let accounts = try #require(first.object["accounts"] as? [[String: Any]])
            #expect(accounts.map { $0["userId"] as? String } == ["barbara@Lab.example.org", "alan@Lab.example.org", "grace@Lab.example.org"])
            #expect(first.object["totalEstimate"] as? Int == 4 && first.object["totalIsExact"] as? Bool == true)
            let cursor = try #require(first.object["nextCursor"] as? String)
            let next = try await admin.request(.GET, "/admin/v1/accounts?userIdContains=lab.example&limit=3&cursor=\(cursor)", token: key)
            #expect((next.object["accounts"] as? [[String: Any]])?.map { $0["userId"] as? String } == ["ada@Lab.example.org"] && next.object["nextCursor"] == nil)
            let prefix = try await admin.request(.GET, "/admin/v1/accounts?userIdPrefix=GR&verified=false&anonymous=false&hasSecondFactor=false", token: key)
            #expect((prefix.object["accounts"] as? [[String: Any]])?.map { $0["accountId"] as? String } == [signedUp["grace"]?.accountId])

            let grace = try #require(signedUp["grace"])
            let detail = try await admin.request(.GET, "/admin/v1/accounts/\(grace.accountId)", token: key)
            #expect(detail.status == 200, "\(detail.text)")
            // The account as the assembler makes it for every answer: its details from Profile, its facts from Identity.
            let account = try #require(detail.object["account"] as? [String: Any])
            let details = try #require(account["details"] as? [String: Any])
            #expect(account["accountId"] as? String == grace.accountId && account["version"] as? Int == 1, "\(detail.text)")
            #expect(details["userId"] as? String == "grace@Lab.example.org" && (details["name"] as? [String: Any])?["givenName"] as? String == "Leland", "\(detail.text)")
            let credentials = try #require(detail.object["credentials"] as? [String: Any])
            #expect(credentials["hasPassword"] as? Bool == true && credentials["sessionCount"] as? Int == 1)
            #expect(!detail.text.contains(grace.token) && !detail.text.contains("argon2") && !detail.text.contains("correct horse"))
            let unknown = try await admin.request(.GET, "/admin/v1/accounts/00000000-0000-4000-8000-000000000000", token: key)
            #expect(unknown.status == 404 && unknown.code == "account.notFound")
            for bad in ["limit=0", "limit=201", "cursor=bogus", "userIdContains="] {
                let refused = try await admin.request(.GET, "/admin/v1/accounts?\(bad)", token: key)
                #expect(refused.status == 422 && refused.code == "admin.invalidRequest", "\(bad): \(refused.status) \(refused.text)")
            }
        }
    }

    @Test("an If-Match that is no ETag is refused (400), whatever its characters, by the admin API and the account API alike; nothing changes")
    func malformedIfMatch() async throws {
        try await Self.withAdmin { running, admin in
            let root = Self.bootstrap.text
            let owner = try await running.signUp("etag@example.org")
            // Values the runtime's URI decoding turned into none (schemathesis's find), and plain malformed ones.
            for value in [#"g5cCj\&X%i]"#, "%", "a&b", "%zz", #""1""2""#, "W/1", #""-1""#] {
                let changed = try await admin.request(
                    .PATCH, "/admin/v1/accounts/\(owner.accountId)", json: #"{"set":{"name":{"givenName":"Changed","familyName":"Stanford"}}}"#, token: root,
                    headers: [("If-Match", value)]
                )
                #expect(changed.status == 400 && changed.code == "request.malformed", "\(value): \(changed.status) \(changed.text)")
                let own = try await running.request(
                    .PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Changed","familyName":"Stanford"}}}"#, token: owner.token, headers: [("If-Match", value)]
                )
                #expect(own.status == 400 && own.code == "request.malformed", "\(value): \(own.status) \(own.text)")
            }
            let account = try await running.request(.GET, "/v1/account", token: owner.token)
            #expect(((account.object["details"] as? [String: Any])?["name"] as? [String: Any])?["givenName"] as? String == "Leland", "\(account.text)")
            // An ETag percent-encoded as the OpenAPI runtime's clients (KontoClient) send it is the ETag.
            let etag = try #require(account.headers.first(name: "ETag"))
            let encoded = etag.replacingOccurrences(of: "\"", with: "%22")
            let applied = try await running.request(
                .PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Emmy","familyName":"Stanford"}}}"#, token: owner.token, headers: [("If-Match", encoded)]
            )
            #expect(applied.status == 200, "\(encoded): \(applied.status) \(applied.text)")
            let stale = try await running.request(
                .PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Ada","familyName":"Stanford"}}}"#, token: owner.token, headers: [("If-Match", encoded)]
            )
            #expect(stale.status == 412, "the encoded ETag is a precondition: \(stale.status) \(stale.text)")
        }
    }

    @Test("the key before the request: without a valid key a malformed body or query is 401, not its refusal, audited once as the method and path tried (issue 69, 15)")
    func keyBeforeBody() async throws {
        try await Self.withAdmin(threshold: 100) { _, admin in
            let root = Self.bootstrap.text
            let wrong = OperatorKeyText.generate().text
            let probes: [(HTTPMethod, String, String?)] = [
                (.POST, "/admin/v1/keys", "{not json"), (.POST, "/admin/v1/keys", #"{"nme":1}"#), (.GET, "/admin/v1/accounts?limit=abc", nil),
                (.GET, "/admin/v1/accounts?limit=0", nil), (.GET, "/admin/v1/audit?cursor=%00", nil), (.POST, "/admin/v1/oidc/clients", #"{"sectorIdentifer":"x"}"#),
                (.POST, "/admin/v1/accounts/abc/disable", "[]"),
            ]
            for (method, path, body) in probes {
                for token in [nil, wrong, "kop_short"] {
                    let refused = try await admin.request(method, path, json: body, token: token)
                    #expect(
                        refused.status == 401 && refused.code == "admin.keyRefused" && refused.headers.first(name: "WWW-Authenticate") == "Bearer",
                        "\(method) \(path) \(token ?? "no key"): \(refused.status) \(refused.text)"
                    )
                }
                // With the key, the same request is refused for what it is.
                let read = try await admin.request(method, path, json: body, token: root)
                #expect((400..<500).contains(read.status) && read.status != 401, "\(method) \(path): \(read.status) \(read.text)")
            }
            // Each refused key was checked once (a request without one never reaches Identity), and says what was tried.
            let audit = try await admin.request(.GET, "/admin/v1/audit?type=admin.operatorAuthorize&limit=100", token: root)
            let facts = try #require(audit.object["entries"] as? [[String: Any]]).compactMap { $0["facts"] as? [String: String] }
            let refusals = facts.filter { $0["outcome"] == "admin.keyRefused" }
            #expect(refusals.count == probes.count * 2, "\(refusals)")
            for (method, path, _) in probes {
                let action = "\(method.rawValue) \(path.split(separator: "?")[0])"
                #expect(refusals.filter { $0["action"] == action }.count == 2 * probes.filter { "\($0.0.rawValue) \($0.1.split(separator: "?")[0])" == action }.count, "\(action)")
            }
            // A valid key's check is the call's own entry, not one more.
            #expect(!facts.isEmpty && facts.allSatisfy { $0["outcome"] != "ok" }, "\(facts)")
        }
    }

    @Test("the attacker's view: no key, a malformed or wrong key (401, counted per address, then 429), a key without the scope (403, nothing done)")
    func refusals() async throws {
        try await Self.withAdmin(threshold: 3) { running, admin in
            let victim = try await running.signUp("victim@example.org")
            let none = try await admin.request(.GET, "/admin/v1/accounts")
            #expect(none.status == 401 && none.code == "admin.keyRefused" && none.headers.first(name: "WWW-Authenticate") == "Bearer")
            // A session token is no operator key (the first refusal counted against this address).
            let session = try await admin.request(.GET, "/admin/v1/accounts", token: victim.token)
            #expect(session.status == 401 && session.code == "admin.keyRefused")
            let auditor = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"auditor","scopes":["audit:read"]}"#, token: Self.bootstrap.text)
            let auditorKey = try #require(auditor.object["secret"] as? String)
            for (method, path, json) in [(HTTPMethod.GET, "/admin/v1/accounts", nil), (.GET, "/admin/v1/accounts/\(victim.accountId)", nil),
                                         (.GET, "/admin/v1/keys", nil), (.POST, "/admin/v1/keys", #"{"name":"mine","scopes":["audit:read"]}"#),
                                         (.DELETE, "/admin/v1/keys/\(Self.bootstrap.keyId)", nil)] as [(HTTPMethod, String, String?)] {
                let refused = try await admin.request(method, path, json: json, token: auditorKey)
                #expect(refused.status == 403 && refused.code == "admin.scopeMissing", "\(method) \(path): \(refused.text)")
            }
            // Nothing was done: no key made, the bootstrap key not revoked.
            let keys = try await admin.request(.GET, "/admin/v1/keys", token: Self.bootstrap.text)
            #expect((keys.object["keys"] as? [[String: Any]])?.count == 2)
            // Wrong keys from one address: refused alike (the session token counted first), then held, even a right key.
            let wrong = OperatorKeyText(keyId: Self.bootstrap.keyId, secret: [UInt8](repeating: 3, count: 32)).text
            var details: Set<String> = [session.object["detail"] as? String ?? ""]
            for key in ["kop_short", wrong] {
                let refused = try await admin.request(.GET, "/admin/v1/keys", token: key)
                #expect(refused.status == 401 && refused.code == "admin.keyRefused", "\(refused.text)")
                details.insert(refused.object["detail"] as? String ?? "")
            }
            // A session token, a malformed and a wrong key read the same.
            #expect(details.count == 1)
            #expect(try await admin.request(.GET, "/admin/v1/keys", token: OperatorKeyText.generate().text).status == 429)
            let held = try await admin.request(.GET, "/admin/v1/keys", token: Self.bootstrap.text)
            #expect(held.status == 429 && held.code == "account.throttled" && held.headers.first(name: "Retry-After") != nil, "\(held.text)")
        }
    }

    @Test("konto admin keys create stores a key in Identity's database that the admin API then accepts; generate makes keys; bad input exits 64")
    func commandLine() async throws {
        try await Self.withAdmin { running, admin in
            let executable = try ServiceProcess.executable(named: "konto")
            let databaseURL = try #require(admin.databaseURL)
            let created = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "create", "--name", "night shift", "--scope", "accounts:read", "--expires-in-days", "7"], environment: ["KONTO_IDENTITY_DATABASE_URL": databaseURL])
            #expect(created.status == 0, "\(created.standardError)")
            let key = try #require(created.standardOutput.split(separator: "\n").last.map(String.init))
            #expect(OperatorKeyText(parsing: key) != nil && !created.standardOutput.contains(databaseURL))
            #expect(try await admin.request(.GET, "/admin/v1/accounts", token: key).status == 200)
            #expect(try await admin.request(.GET, "/admin/v1/keys", token: key).status == 403)
            let generated = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "generate"])
            #expect(generated.status == 0 && OperatorKeyText(parsing: generated.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
            for arguments in [["--name", "x", "--scope", "accounts:reed"], ["--name", "x"], ["--name", "", "--all-scopes"], ["--name", "x", "--all-scopes", "--expires-in-days", "0"]] {
                let refused = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "create"] + arguments, environment: ["KONTO_IDENTITY_DATABASE_URL": databaseURL])
                #expect(refused.status == 64, "\(arguments): \(refused.standardError)")
            }
            let unreachable = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "create", "--name", "x", "--all-scopes"], environment: ["KONTO_IDENTITY_DATABASE_URL": "postgres://konto:secret-password@127.0.0.1:1/none"])
            #expect(unreachable.status == 3 && !unreachable.standardError.contains("secret-password"), "\(unreachable.standardError)")

            // Through the admin API: the key from the environment or standard input, never the command line.
            let ada = try await running.signUp("ada@example.org")
            let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL), "KONTO_ADMIN_KEY": key]
            let search = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "search", "--contains", "ADA@", "--json"], environment: environment)
            #expect(search.status == 0, "\(search.standardError)")
            let page = try JSONSerialization.jsonObject(with: Data(search.standardOutput.utf8)) as? [String: Any]
            #expect((page?["accounts"] as? [[String: Any]])?.map { $0["accountId"] as? String } == [ada.accountId])
            let text = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "search", "--prefix", "ada"], environment: environment)
            #expect(text.standardOutput.contains("ada@example.org") && text.standardOutput.contains("1 matching"), "\(text.standardOutput)")
            let show = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "show", ada.accountId], environment: environment)
            #expect(show.status == 0 && show.standardOutput.contains("userId      ada@example.org") && show.standardOutput.contains("sessions    1"), "\(show.standardOutput)")
            let refused = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "list"], environment: environment)
            #expect(refused.status == 1 && refused.standardError.contains("scope"), "\(refused.standardError)")
            // The bootstrap key on standard input: make a key, list it, revoke it.
            let root = ["KONTO_ADMIN_URL": try #require(admin.adminURL)]
            let made = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "new", "robot", "--scope", "accounts:read", "--json"], environment: root, input: Self.bootstrap.text + "\n")
            #expect(made.status == 0, "\(made.standardError)")
            let madeKey = try JSONSerialization.jsonObject(with: Data(made.standardOutput.utf8)) as? [String: Any]
            let madeId = try #require(madeKey?["id"] as? String)
            #expect(OperatorKeyText(parsing: madeKey?["secret"] as? String ?? "")?.keyId == madeId)
            let listed = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "list"], environment: root, input: Self.bootstrap.text + "\n")
            #expect(listed.standardOutput.contains(madeId) && listed.standardOutput.contains("robot"), "\(listed.standardOutput)")
            let revoked = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "revoke", madeId], environment: root, input: Self.bootstrap.text + "\n")
            #expect(revoked.status == 0 && revoked.standardOutput == "Key \(madeId) revoked.\n")
            let gone = try await ServiceProcess.run(executable, arguments: ["admin", "keys", "list"], environment: ["KONTO_ADMIN_URL": "http://127.0.0.1:1"], input: Self.bootstrap.text + "\n")
            #expect(gone.status == 3 && gone.standardError.contains("KONTO_GATEWAY_ADMIN_PORT"), "\(gone.standardError)")
        }
    }

    /// One stack for the operator's changes and what the audit log shows of them (a stack per test cost CI a minute).
    @Test("disabling, sessions and deletion, then the audit log of it all: every change and admin call with its key, failures with their reason; konto admin audit verify finds a changed entry")
    func changesAndAudit() async throws {
        try await Self.withAdmin { running, admin in
            try await Self.disabling(running, admin)
            try await Self.sessions(running, admin)
            let deleted = try await Self.deletion(running, admin)
            try await Self.audit(running, admin, deleted: deleted)
        }
    }

    /// Deletion by an operator: the owner's path (the session refused on its very next request, the account gone from
    /// search, its userId free again); a second time 404; the command asks for --yes. Returns the deleted accountId.
    static func deletion(_ running: GatewayHarness.Running, _ admin: GatewayHarness.Running) async throws -> String {
        let root = Self.bootstrap.text
        let user = try await running.signUp("babbage@example.org")
        let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"looker","scopes":["accounts:read"]}"#, token: root)
        let readerKey = try #require(reader.object["secret"] as? String)
        #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)", token: readerKey).code == "admin.scopeMissing")
        // The help desk removes the authenticator app the owner lost: gone from the record; a second time 404.
        let enrolment = try await running.request(.POST, "/v1/account/factors/totp", token: user.token)
        let secret = try #require(enrolment.object["secret"] as? String, "\(enrolment.text)")
        let factorId = try #require(enrolment.object["factorId"] as? String)
        let code = try #require(TOTPTestCode.code(base32Secret: secret))
        #expect(try await running.request(.POST, "/v1/account/factors/totp/\(factorId)/confirm", json: #"{"code":"\#(code)"}"#, token: user.token).status == 200)
        #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/factors/\(factorId)", token: readerKey).code == "admin.scopeMissing")
        #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/factors/\(factorId)", token: root).status == 204)
        let record = try await admin.request(.GET, "/admin/v1/accounts/\(user.accountId)", token: root)
        #expect(((record.object["credentials"] as? [String: Any])?["factors"] as? [Any])?.isEmpty == true, "\(record.text)")
        #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/factors/\(factorId)", token: root).code == "account.factorNotFound")
        // A reset mailed on the owner's behalf first (202), through the command too; for no account, 404.
        let reset = try await admin.request(.POST, "/admin/v1/accounts/\(user.accountId)/password-reset", token: root)
        #expect(reset.status == 202, "\(reset.text)")
        #expect(try await admin.request(.POST, "/admin/v1/accounts/nobody/password-reset", token: root).code == "account.notFound")
        #expect(try await running.request(.GET, "/v1/account", token: user.token).status == 200)
        let deleted = try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)", token: root)
        #expect(deleted.status == 204, "\(deleted.text)")
        #expect(try await running.request(.GET, "/v1/account", token: user.token).status == 401)
        let found = try await admin.request(.GET, "/admin/v1/accounts?userIdPrefix=babbage", token: root)
        #expect((found.object["accounts"] as? [[String: Any]])?.isEmpty == true, "\(found.text)")
        let again = try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)", token: root)
        #expect(again.status == 404 && again.code == "account.notFound")
        // Its userId is free again.
        #expect(try await running.request(.POST, "/v1/accounts", json: #"{"userId":"babbage@example.org","password":"correct horse battery","details":{"name":{"givenName":"C"}}}"#).status == 201)
        let executable = try ServiceProcess.executable(named: "konto")
        let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL), "KONTO_ADMIN_KEY": root]
        let unasked = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "delete", user.accountId], environment: environment)
        #expect(unasked.status == 64 && unasked.standardError.contains("--yes"), "\(unasked.standardError)")
        let second = try await running.signUp("lovelace@example.org")
        let mailed = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "password-reset", second.accountId], environment: environment)
        #expect(mailed.status == 0 && mailed.standardOutput == "A password reset is on its way to the owner of \(second.accountId).\n", "\(mailed.standardOutput)\(mailed.standardError)")
        let command = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "delete", second.accountId, "--yes"], environment: environment)
        #expect(command.status == 0 && command.standardOutput == "Account \(second.accountId) deleted.\n", "\(command.standardOutput)\(command.standardError)")
        #expect(try await running.request(.GET, "/v1/account", token: second.token).status == 401)
        return user.accountId
    }

    /// Disabling: the session is refused at once, the right password reads as a wrong one, search finds it disabled;
    /// enabled, it signs in; konto admin does it too.
    static func disabling(_ running: GatewayHarness.Running, _ admin: GatewayHarness.Running) async throws {
        do {
            let root = Self.bootstrap.text
            let user = try await running.signUp("turing@example.org")
            #expect(try await running.request(.GET, "/v1/account", token: user.token).status == 200)
            #expect(try await admin.request(.POST, "/admin/v1/accounts/\(user.accountId)/disable", token: root).status == 204)
            // The very next request: the cache barrier held the answer until the session was dropped everywhere.
            #expect(try await running.request(.GET, "/v1/account", token: user.token).status == 401)
            let right = try await running.request(.POST, "/v1/sessions", json: #"{"userId":"turing@example.org","password":"correct horse battery"}"#)
            let wrong = try await running.request(.POST, "/v1/sessions", json: #"{"userId":"turing@example.org","password":"wrong horse battery"}"#)
            #expect(right.status == 401 && right.code == "account.wrongCredentials" && right.object["detail"] as? String == wrong.object["detail"] as? String)
            let found = try await admin.request(.GET, "/admin/v1/accounts?disabled=true", token: root)
            #expect((found.object["accounts"] as? [[String: Any]])?.map { $0["accountId"] as? String } == [user.accountId])
            let detail = try await admin.request(.GET, "/admin/v1/accounts/\(user.accountId)", token: root)
            #expect((detail.object["credentials"] as? [String: Any])?["disabledAt"] is String && (detail.object["credentials"] as? [String: Any])?["sessionCount"] as? Int == 0)
            // Through the command: enable, then disable again.
            let executable = try ServiceProcess.executable(named: "konto")
            let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL), "KONTO_ADMIN_KEY": root]
            let enabled = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "enable", user.accountId], environment: environment)
            #expect(enabled.status == 0 && enabled.standardOutput == "Account \(user.accountId) enabled.\n", "\(enabled.standardError)")
            let signedIn = try await running.request(.POST, "/v1/sessions", json: #"{"userId":"turing@example.org","password":"correct horse battery"}"#)
            #expect(signedIn.status == 200, "\(signedIn.text)")
            let disabled = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "disable", user.accountId, "--json"], environment: environment)
            #expect(disabled.status == 0 && disabled.standardOutput.contains(#""disabled":true"#), "\(disabled.standardError)")
            let unknown = try await admin.request(.POST, "/admin/v1/accounts/nobody/disable", token: root)
            #expect(unknown.status == 404 && unknown.code == "account.notFound")
        }
    }

    /// Sessions: listed without tokens; one ended, then all, each refused on its very next request; another account's
    /// session is not found; the scope is needed.
    static func sessions(_ running: GatewayHarness.Running, _ admin: GatewayHarness.Running) async throws {
        do {
            let root = Self.bootstrap.text
            let user = try await running.signUp("hopper@example.org")
            let second = try await running.request(.POST, "/v1/sessions", json: #"{"userId":"hopper@example.org","password":"correct horse battery"}"#)
            let secondToken = try #require((second.object["session"] as? [String: Any])?["token"] as? String)
            let other = try await running.signUp("other@example.org")
            let listed = try await admin.request(.GET, "/admin/v1/accounts/\(user.accountId)/sessions", token: root)
            let sessions = try #require(listed.object["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2 && !listed.text.contains(user.token) && !listed.text.contains(secondToken), "\(listed.text)")
            let first = try #require(sessions.first?["id"] as? String)
            let otherSession = try #require((try await admin.request(.GET, "/admin/v1/accounts/\(other.accountId)/sessions", token: root).object["sessions"] as? [[String: Any]])?.first?["id"] as? String)
            let foreign = try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/sessions/\(otherSession)", token: root)
            #expect(foreign.status == 404 && foreign.code == "admin.sessionNotFound")
            #expect(try await running.request(.GET, "/v1/account", token: other.token).status == 200)
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
            let readerKey = try #require(reader.object["secret"] as? String)
            #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/sessions", token: readerKey).code == "admin.scopeMissing")
            #expect(try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/sessions/\(first)", token: root).status == 204)
            #expect(try await running.request(.GET, "/v1/account", token: user.token).status == 401)
            #expect(try await running.request(.GET, "/v1/account", token: secondToken).status == 200)
            let all = try await admin.request(.DELETE, "/admin/v1/accounts/\(user.accountId)/sessions", token: root)
            #expect(all.status == 200 && all.object["sessionsEnded"] as? Int == 1, "\(all.text)")
            #expect(try await running.request(.GET, "/v1/account", token: secondToken).status == 401)
            let executable = try ServiceProcess.executable(named: "konto")
            let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL), "KONTO_ADMIN_KEY": root]
            let none = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "sessions", user.accountId], environment: environment)
            #expect(none.status == 0 && none.standardOutput == "No sessions.\n", "\(none.standardOutput)\(none.standardError)")
            let ended = try await ServiceProcess.run(executable, arguments: ["admin", "accounts", "end-sessions", other.accountId], environment: environment)
            #expect(ended.status == 0 && ended.standardOutput == "1 session of \(other.accountId) ended.\n", "\(ended.standardOutput)\(ended.standardError)")
            #expect(try await running.request(.GET, "/v1/account", token: other.token).status == 401)
        }
    }

    /// The audit log of what `disabling` and `sessions` did: the operator's changes and calls under the key's id,
    /// failed sign-ins with their internal reason and the client's address; sealed and verified; a changed entry found.
    static func audit(_ running: GatewayHarness.Running, _ admin: GatewayHarness.Running, deleted: String) async throws {
        let root = Self.bootstrap.text
        // The deleted account's entries: kept by id and type, erased of personal data, the deletion the operator's. (An
        // admin call's own entry keeps the address it came from: the operator's, not the account's.)
        let gone = try await admin.request(.GET, "/admin/v1/audit?accountId=\(deleted)", token: root)
        let goneEntries = try #require(gone.object["entries"] as? [[String: Any]])
        let deletion = try #require(goneEntries.first { $0["type"] as? String == "account.deleted" }, "\(gone.text)")
        #expect(deletion["actorType"] as? String == "operator" && deletion["actorId"] as? String == Self.bootstrap.keyId)
        let owners = goneEntries.filter { !($0["type"] as? String ?? "").hasPrefix("admin.") }
        #expect(owners.allSatisfy { $0["personal"] == nil } && owners.contains { $0["erased"] as? Bool == true }, "\(gone.text)")
        #expect(goneEntries.contains { $0["type"] as? String == "admin.deleteAccount" })
        let turing = try #require((try await admin.request(.GET, "/admin/v1/accounts?userIdPrefix=turing", token: root).object["accounts"] as? [[String: Any]])?.first?["accountId"] as? String)
        let listed = try await admin.request(.GET, "/admin/v1/audit?accountId=\(turing)&limit=500", token: root)
        #expect(listed.status == 200, "\(listed.text)")
        let entries = try #require(listed.object["entries"] as? [[String: Any]]).reversed()
        let types = entries.map { $0["type"] as? String ?? "" }
        for expected in ["account.created", "account.disabled", "sessions.revoked", "admin.disableAccount", "signIn.failed", "account.enabled", "admin.enableAccount", "signIn.succeeded"] {
            #expect(types.contains(expected), "\(expected) in \(types)")
        }
        let byOperator = entries.filter { $0["actorType"] as? String == "operator" }
        #expect(!byOperator.isEmpty && byOperator.allSatisfy { $0["actorId"] as? String == Self.bootstrap.keyId })
        let failures = entries.filter { $0["type"] as? String == "signIn.failed" }.map { $0["facts"] as? [String: String] ?? [:] }
        #expect(failures.contains { $0["reason"] == "accountDisabled" } && failures.contains { $0["reason"] == "wrongPassword" }, "\(failures)")
        // Where the sign-in came from (the gateway passes the client's address on); every entry listed is sealed.
        #expect(entries.contains { ($0["personal"] as? [String: String])?["clientAddress"] == "127.0.0.1" })
        #expect(entries.allSatisfy { $0["position"] is Int })
        // Never a secret: no token, key or hash in the log.
        #expect(!listed.text.contains(root) && !listed.text.contains("$argon2"))
        // A reader cannot read it; the refusal is itself in the log, under the reader's key.
        let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"auditless","scopes":["accounts:read"]}"#, token: root)
        let readerKey = try #require(reader.object["secret"] as? String)
        let readerId = try #require((reader.object["key"] as? [String: Any])?["id"] as? String)
        #expect(try await admin.request(.GET, "/admin/v1/audit", token: readerKey).code == "admin.scopeMissing")
        let refusal = try await admin.request(.GET, "/admin/v1/audit?actorId=\(readerId)&type=admin.auditEntries", token: root)
        #expect((refusal.object["entries"] as? [[String: Any]])?.map { ($0["facts"] as? [String: String])?["outcome"] } == ["admin.scopeMissing"], "\(refusal.text)")

        // konto admin audit: list and verify; then an entry changed behind Identity's back is found.
        let executable = try ServiceProcess.executable(named: "konto")
        let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL), "KONTO_ADMIN_KEY": root]
        let list = try await ServiceProcess.run(executable, arguments: ["admin", "audit", "list", "--account", turing, "--type", "account.disabled", "--json"], environment: environment)
        let page = try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [String: Any]
        #expect(list.status == 0 && (page?["entries"] as? [[String: Any]])?.count == 2, "\(list.standardOutput)\(list.standardError)")
        let intact = try await ServiceProcess.run(executable, arguments: ["admin", "audit", "verify"], environment: environment)
        #expect(intact.status == 0 && intact.standardOutput.hasPrefix("The audit log is intact: "), "\(intact.standardOutput)\(intact.standardError)")
        let databaseURL = try #require(admin.databaseURL)
        let changed = try await ServiceProcess.run("/usr/bin/env", arguments: [
            "psql", databaseURL, "-v", "ON_ERROR_STOP=1", "-c", "UPDATE identity.audit_log SET facts = '{\"tampered\":\"yes\"}' WHERE position = 3",
        ])
        #expect(changed.status == 0, "\(changed.standardError)")
        let broken = try await ServiceProcess.run(executable, arguments: ["admin", "audit", "verify"], environment: environment)
        #expect(broken.status == 1 && broken.standardOutput.hasPrefix("The audit log is broken at position 3: The entry was changed."), "\(broken.standardOutput)\(broken.standardError)")
        let refused = try await ServiceProcess.run(executable, arguments: ["admin", "audit", "list", "--after", "yesterday"], environment: environment)
        #expect(refused.status == 64, "\(refused.standardError)")
    }
}
