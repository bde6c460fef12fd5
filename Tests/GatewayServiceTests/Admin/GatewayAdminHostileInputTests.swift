import AsyncHTTPClient
import Crypto
import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWebAuthn
import KontoWire
import NIOHTTP1
import Testing

/// Every number an operator's key or an OpenID client can send, at its extremes, to the four executables on PostgreSQL
/// (issue 69, 1): each is refused with a 4xx and every process lives on. A forged search cursor once stopped Identity
/// (the cursor's milliseconds became a date PostgresNIO's encoding trapped on).
@Suite("Gateway admin API and OpenID Provider: numbers at their extremes", .serialized, .timeLimit(.minutes(5)))
struct GatewayAdminHostileInputTests {
    /// The texts a number field is given: zero, negative, past Int64, float spellings, NaN-like and empty.
    static let extremes = ["0", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e300", "NaN", "Infinity", "0x10", "", "1.5"]

    /// base64url (unpadded) of `text`: a cursor as Konto spells one.
    static func cursor(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func withSystem(_ body: @escaping @Sendable (GatewayHarness.Running, GatewayHarness.Running, KontoProcessStack, String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("konto-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("es256.pem").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let clientsFile = folder.appendingPathComponent("clients.yaml").path
        try """
        clients:
          - id: app
            name: App
            type: public
            redirectUris: [https://app.example.org/callback]
            scopes: [openid, profile, email, offline_access]
        """.write(toFile: clientsFile, atomically: true, encoding: .utf8)
        let bootstrap = OperatorKeyText.generate().text
        let adminPort = try FreePort.loopback()
        try await GatewayHarness.withProcesses(environment: [
            "KONTO_GATEWAY_ADMIN_PORT": "\(adminPort)", "KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY": bootstrap,
            "KONTO_IDENTITY_OIDC_ISSUER": "http://localhost:8080", "KONTO_IDENTITY_OIDC_KEYS": keyFile, "KONTO_IDENTITY_OIDC_CLIENTS": clientsFile,
        ]) { running, stack in
            var admin = running
            admin.baseURL = "http://127.0.0.1:\(adminPort)"
            _ = try await admin.eventually(200, .GET, "/admin/v1/keys", token: bootstrap)
            try await body(running, admin, stack, bootstrap)
        }
    }

    /// Every service still runs and the gateway finds them all ready.
    static func alive(_ running: GatewayHarness.Running, _ stack: KontoProcessStack, after what: String) async throws {
        for service in KontoProcessStack.services {
            #expect(stack.process(service)?.isRunning == true, "\(service) stopped after \(what)")
        }
        #expect(try await running.request(.GET, "/health/ready").status == 200, "not ready after \(what)")
    }

    @Test("cursors, page sizes, times and lifetimes at their extremes: a 4xx each (never a 5xx), every process alive, the refusals audited")
    func admin() async throws {
        try await Self.withSystem { running, admin, stack, root in
            _ = try await running.signUp("ada@example.org")
            // The cursor that stopped Identity, and its neighbours: a place past the year 9999, before year 1, a number
            // past Int64, no account id, not base64 at all.
            let cursors = [
                "OTk5OTk5OTk5OTk5OTk5OTkueA", Self.cursor("99999999999999999.x"), Self.cursor("9223372036854775807.x"), Self.cursor("-9223372036854775808.x"),
                Self.cursor("-62135596800001.x"), Self.cursor("253402300800000.x"), Self.cursor("99999999999999999999999.x"), Self.cursor("1e300.x"),
                Self.cursor("NaN.x"), Self.cursor("0."), Self.cursor("."), Self.cursor("1.\u{0}"), "!!!", String(repeating: "A", count: 300),
            ]
            var paths = cursors.map { "/admin/v1/accounts?cursor=\($0)" } + cursors.map { "/admin/v1/audit?cursor=\($0)" }
            for value in Self.extremes {
                let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
                paths += ["/admin/v1/accounts?limit=\(encoded)", "/admin/v1/audit?limit=\(encoded)", "/admin/v1/deliveries/failed?group=mail&limit=\(encoded)"]
                paths += ["/admin/v1/audit?cursor=\(encoded)"]
            }
            for time in ["99999-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "1e300", "NaN", "2026-13-45T99:99:99Z"] {
                let encoded = time.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? time
                paths += [
                    "/admin/v1/accounts?createdAfter=\(encoded)", "/admin/v1/accounts?createdBefore=\(encoded)",
                    "/admin/v1/audit?since=\(encoded)", "/admin/v1/audit?until=\(encoded)",
                ]
            }
            for path in paths {
                let answer = try await admin.request(.GET, path, token: root)
                // A time far out is clamped to the years Konto keeps (a search over them answers 200); anything else
                // that is not a place Konto gave is refused.
                #expect((200..<500).contains(answer.status), "\(path): \(answer.status) \(answer.text)")
                // (The audit log's cursor is a position: any positive one is a place to list before.)
                if path.contains("limit=") || path.hasPrefix("/admin/v1/accounts?cursor=") {
                    #expect((400..<500).contains(answer.status), "\(path): \(answer.status) \(answer.text)")
                }
            }
            try await Self.alive(running, stack, after: "the cursors, limits and times")

            // Bodies: a key's expiry, a secret's overlap, an import's fields, each at its extremes.
            var bodies: [(String, String)] = []
            for value in Self.extremes where !value.isEmpty {
                let number = Double(value) == nil || value.hasPrefix("0x") ? "\"\(value)\"" : value
                bodies.append(("/admin/v1/oidc/clients/app/secret", #"{"keepPreviousSeconds":\#(number)}"#))
                bodies.append(("/admin/v1/keys", #"{"name":"k","scopes":["accounts:read"],"expiresAt":\#(number)}"#))
            }
            for time in ["99999-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z"] {
                bodies.append(("/admin/v1/keys", #"{"name":"k","scopes":["accounts:read"],"expiresAt":"\#(time)"}"#))
            }
            for (path, json) in bodies {
                let answer = try await admin.request(.POST, path, json: json, token: root)
                #expect((400..<500).contains(answer.status) || answer.status == 201, "\(path) \(json): \(answer.status) \(answer.text)")
            }
            for line in [
                #"{"userId":"x@example.org","passwordHash":"$argon2id$v=19$m=9223372036854775807,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"}"#,
                #"{"userId":"y@example.org","passwordHash":"$pbkdf2-sha256$99999999999999999999$c2FsdA$aGFzaA"}"#,
                #"{"userId":"z@example.org","passwordHash":"$2b$99$abcdefghijklmnopqrstuu5e6/m2p7fCrZ6pLUYFQ0kXr0Zc9Ij0u"}"#,
                #"{"userId":"w@example.org","verified":1e300}"#,
            ] {
                let answer = try await GatewayAdminImportTests.ndjson(admin, line, token: root)
                let problem = ((answer.object["lines"] as? [[String: Any]])?.first?["problem"] as? [String: Any])?["code"] as? String
                #expect(answer.status == 200 && problem != nil, "\(line): \(answer.status) \(answer.text)")
            }
            try await Self.alive(running, stack, after: "the bodies")

            // The refused search was audited with its outcome (after the key was authorized).
            let audit = try await admin.request(.GET, "/admin/v1/audit?type=admin.searchAccounts&limit=500", token: root)
            let outcomes = (audit.object["entries"] as? [[String: Any]] ?? []).compactMap { ($0["facts"] as? [String: Any])?["outcome"] as? String }
            #expect(outcomes.contains("admin.invalidRequest"), "\(audit.text.prefix(2_000))")
        }
    }

    @Test("an import with a refused key is one 401 with a challenge, counted once against the address (eight lines twice lock no one out); every refused key's 401 carries WWW-Authenticate")
    func refusedKeys() async throws {
        try await Self.withSystem { running, admin, stack, root in
            let mistyped = OperatorKeyText.generate().text
            let eight = (1...8).map { #"{"userId":"line\#($0)@example.org","details":{"name":{"givenName":"Line"}}}"# }.joined(separator: "\n")
            for _ in 0..<2 {
                let refused = try await GatewayAdminImportTests.ndjson(admin, eight, token: mistyped)
                #expect(refused.status == 401 && refused.code == "admin.keyRefused" && refused.headers.first(name: "WWW-Authenticate") == "Bearer", "\(refused.status) \(refused.text)")
                #expect(refused.object["lines"] == nil)
            }
            // The operator mends the key: the import runs (five failures would have held the address).
            let imported = try await GatewayAdminImportTests.ndjson(admin, eight, token: root)
            #expect(imported.status == 200 && imported.object["created"] as? Int == 8, "\(imported.status) \(imported.text)")
            // A key without accounts:write: 403 for the whole import, no line made.
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
            let readerKey = try #require(reader.object["secret"] as? String)
            let lacking = try await GatewayAdminImportTests.ndjson(admin, #"{"userId":"nine@example.org","details":{"name":{"givenName":"Nine"}}}"#, token: readerKey)
            #expect(lacking.status == 403 && lacking.code == "admin.scopeMissing", "\(lacking.text)")
            // A keys:write key revokes no stronger key, and the last key holding keys:write is not revoked.
            let manager = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"manager","scopes":["keys:write"]}"#, token: root)
            let managerKey = try #require(manager.object["secret"] as? String), managerId = try #require((manager.object["key"] as? [String: Any])?["id"] as? String)
            let keys = try await admin.request(.GET, "/admin/v1/keys", token: root).object["keys"] as? [[String: Any]] ?? []
            let rootId = try #require(keys.first { $0["name"] as? String == "bootstrap" }?["id"] as? String)
            let stronger = try await admin.request(.DELETE, "/admin/v1/keys/\(rootId)", token: managerKey)
            #expect(stronger.status == 403 && stronger.code == "admin.scopeMissing", "\(stronger.text)")
            #expect(try await admin.request(.DELETE, "/admin/v1/keys/\(managerId)", token: root).status == 204)
            let last = try await admin.request(.DELETE, "/admin/v1/keys/\(rootId)", token: root)
            #expect(last.status == 409 && last.code == "admin.lastKeyManager", "\(last.text)")
            #expect(try await admin.request(.GET, "/admin/v1/keys", token: root).status == 200, "the bootstrap key still works")
            // Every refused key's 401 has its challenge (RFC 9110 15.5.2), whichever route.
            // (Two more failures: four in all from this address, under the five that hold it.)
            for (method, path) in [(HTTPMethod.GET, "/admin/v1/keys"), (.DELETE, "/admin/v1/oidc/clients/app")] {
                let answer = try await admin.request(method, path, token: OperatorKeyText.generate().text)
                #expect(answer.status == 401 && answer.headers.first(name: "WWW-Authenticate") == "Bearer", "\(method) \(path): \(answer.status)")
            }
            try await Self.alive(running, stack, after: "the refused keys")
        }
    }

    @Test("the OpenID Provider's numbers and bounds at their extremes (max_age, the PKCE challenge, the nonce): OAuth's errors, every process alive")
    func openID() async throws {
        try await Self.withSystem { running, _, stack, _ in
            let (session, _) = try await running.signUp("grace@example.org")
            let identityPort = try #require(stack.environment["KONTO_IDENTITY_PORT"].flatMap(Int.init))
            let identity = WireClient(
                configuration: .init(port: identityPort, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(stack.wireSecret)),
                logger: GatewayHarness.logger
            )
            try await RunningServices.with([identity], logger: GatewayHarness.logger) { () async throws in
                let challenge = Base64URL.encode(Array(SHA256.hash(data: Data("verifier-verifier-verifier-verifier-verifier".utf8))))
                func authorize(_ extra: [(String, String)], replacing: Set<String> = []) async throws -> IdentityOpenIDAuthorization {
                    let base = [
                        ("response_type", "code"), ("client_id", "app"), ("redirect_uri", "https://app.example.org/callback"), ("scope", "openid"),
                        ("state", "s"), ("nonce", "n"), ("code_challenge", challenge), ("code_challenge_method", "S256"),
                    ].filter { !replacing.contains($0.0) }
                    return try await identity.call(IdentityContract.openIDAuthorize, IdentityOpenIDAuthorizeRequest(
                        token: BearerToken(session), parameters: (base + extra).map { IdentityOpenIDParameter($0.0, $0.1) }, requestedAt: Timestamp(Date())
                    ))
                }
                func error(_ answer: IdentityOpenIDAuthorization) -> String? {
                    answer.location.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "error" }?.value } ?? answer.error
                }
                for value in Self.extremes + ["-0", "99999999999", "١٢"] where !["0"].contains(value) {
                    #expect(error(try await authorize([("max_age", value)])) == "invalid_request", "max_age=\(value)")
                }
                // One bound for each, checked at the request: S256's challenge is 43 characters, a nonce at most 512.
                for challenge in [String(repeating: "a", count: 44), String(repeating: "a", count: 128), String(repeating: "a", count: 42)] {
                    #expect(error(try await authorize([("code_challenge", challenge)], replacing: ["code_challenge"])) == "invalid_request", "\(challenge.count)")
                }
                #expect(error(try await authorize([("nonce", String(repeating: "n", count: 513))], replacing: ["nonce"])) == "invalid_request")
                // Past the longest value read at all: shown to the person, never sent anywhere.
                #expect(try await authorize([("state", String(repeating: "s", count: 2_049))], replacing: ["state"]).outcome == .refused)
                #expect(error(try await authorize([("nonce", String(repeating: "n", count: 512)), ("max_age", "0")], replacing: ["nonce"])) != "invalid_request")
            }
            // The token endpoint's numbers are none, but its texts at their extremes are refused as OAuth says.
            for fields in [
                [("grant_type", "authorization_code"), ("code", String(repeating: "c", count: 10_000)), ("redirect_uri", "https://app.example.org/callback"), ("code_verifier", "v"), ("client_id", "app")],
                [("grant_type", "refresh_token"), ("refresh_token", "\u{0}"), ("client_id", "app")],
                [("grant_type", "9223372036854775808"), ("client_id", "app")],
            ] {
                let answer = try await GatewayOpenIDTests.form(running, "/oauth2/token", fields, authorization: nil)
                #expect((400..<500).contains(answer.status), "\(fields.map(\.0)): \(answer.status) \(answer.text)")
            }
            try await Self.alive(running, stack, after: "the OAuth requests")
        }
    }
}
