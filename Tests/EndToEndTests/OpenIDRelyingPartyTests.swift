import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoContracts
import KontoTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Konto as an OpenID Provider judged by a relying party no one here wrote: Authlib (Tests/OIDC/relying_party.py)
/// signs a person in through the console in headless Chromium — a public third-party client with its consent page and
/// a confidential first-party one (client_secret_basic, RS256, a pairwise `sub`) — exchanges and refreshes with PKCE,
/// calls userinfo, introspects and revokes, validates every ID token against the JWK Set it fetched itself, and runs
/// the hostile cases (a code used twice, a redirect URI one character off, no or plain PKCE, a refresh token reused
/// after rotation, one client's token presented by another, `prompt=none` without a session) and RP-initiated logout.
/// Then Apache httpd with mod_auth_openidc (Debian's), in front of a dashboard, signs the person in (its REMOTE_USER
/// the email claim, the name from userinfo) and out again (RP-initiated logout with its own hint). The whole system
/// runs as processes; the keys are made by openssl, as an operator would.
@Suite("OpenID Provider judged by Authlib and mod_auth_openidc in Chromium", .serialized, .timeLimit(.minutes(8)))
struct OpenIDRelyingPartyTests {
    static let password = "correct horse battery"

    @Test(
        "Authlib's relying party: code flow with PKCE through the console, refresh, userinfo, its own JWKS checks, the hostile cases, logout; then Apache's mod_auth_openidc signs in and out",
        .enabled(
            if: (ConsoleBrowserTests.python != nil && ConsoleBrowserTests.chromedriver != nil) || ConsoleBrowserTests.onCI,
            "KONTO_BROWSER_PYTHON and KONTO_CHROMEDRIVER are not set (scripts/test.sh sets them)"
        )
    )
    func relyingParty() async throws {
        guard let (python, chromedriver, _, screenshots) = try ConsoleBrowserTests.prepare(screenshots: "oidc-relying-party") else { return }
        let script = try EndToEndSystem.repositoryFile("Tests/OIDC/relying_party.py")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("konto-oidc-rp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ecKey = folder.appendingPathComponent("es256.pem").path
        let rsaKey = folder.appendingPathComponent("rs256.pem").path
        try Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ecKey])
        try Self.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsaKey])
        let secret = "rp-dashboard-secret-\(UUID().uuidString)"
        let secretFile = folder.appendingPathComponent("dashboard-secret").path
        try secret.write(toFile: secretFile, atomically: true, encoding: .utf8)
        let gatewayPort = try FreePort.loopback()
        let relyingPartyPort = try FreePort.loopback()
        let relyingParty = "http://127.0.0.1:\(relyingPartyPort)"
        let apachePort = try FreePort.loopback()
        let clientsFile = folder.appendingPathComponent("clients.yaml").path
        try """
        clients:
          - id: rp-study
            name: Study on the web
            type: public
            redirectUris: [\(relyingParty)/callback]
            postLogoutRedirectUris: [\(relyingParty)/signed-out]
            scopes: [openid, profile, email, offline_access]
          - id: rp-apache
            name: Apache dashboard
            type: confidential
            authentication: client_secret_basic
            secretFile: \(secretFile)
            redirectUris: [http://127.0.0.1:\(apachePort)/dashboard/redirect_uri]
            postLogoutRedirectUris: [http://127.0.0.1:\(apachePort)/signed-out.html]
            scopes: [openid, email, profile]
            firstParty: true
        """.write(toFile: clientsFile, atomically: true, encoding: .utf8)
        // The issuer is the gateway as the browser reaches it.
        let issuer = "http://localhost:\(gatewayPort)"
        let bootstrap = OperatorKeyText.generate().text
        let adminPort = try FreePort.loopback()
        try await EndToEndSystem.with(environment: [
            "KONTO_GATEWAY_PORT": "\(gatewayPort)", "KONTO_IDENTITY_OIDC_ISSUER": issuer, "KONTO_IDENTITY_OIDC_KEYS": "\(ecKey),\(rsaKey)",
            "KONTO_IDENTITY_OIDC_CLIENTS": clientsFile, "KONTO_GATEWAY_ADMIN_PORT": "\(adminPort)", "KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY": bootstrap,
        ]) { system in
            // The confidential client is registered through the admin API (the others come from the file): Authlib
            // signs in with the secret Konto made for it.
            let operators = KontoAdmin(adminURL: "http://127.0.0.1:\(adminPort)", key: bootstrap, httpClient: system.http)
            let registered = try await operators.createOpenIDClient(id: "rp-dashboard", KontoOpenIDClientSettings(
                name: "Study dashboard", type: "confidential", authentication: "client_secret_basic", redirectURIs: ["\(relyingParty)/callback"],
                postLogoutRedirectURIs: ["\(relyingParty)/signed-out"], scopes: ["openid", "email", "offline_access"], firstParty: true,
                idTokenAlgorithm: "RS256", sectorIdentifier: "dashboard.example.org"
            ))
            let dashboardSecret = try #require(registered.secret)
            let client = system.client()
            let schema = try await client.schema()
            let userId = "grace.rp@example.org"
            let signedUp = try await client.signUp(
                userId: userId, password: Self.password, details: try schema.details(fromAssignments: ["name=Grace Hopper", "handle=grace_rp"])
            )
            // mod_auth_openidc in Apache httpd, from Debian: the off-the-shelf relying party.
            let apache = try await ApacheRelyingParty.start(folder: folder.appendingPathComponent("apache"), port: apachePort, issuer: issuer, secret: secret, http: system.http)
            var environment = [
                "KONTO_ISSUER": issuer, "KONTO_RP_PORT": "\(relyingPartyPort)", "KONTO_RP_SECRET": dashboardSecret, "KONTO_USER_ID": userId,
                "KONTO_PASSWORD": Self.password, "KONTO_SCREENSHOTS": screenshots, "KONTO_CHROMEDRIVER": chromedriver, "PYTHONUNBUFFERED": "1",
                "SE_OFFLINE": "true", "SE_AVOID_STATS": "true",
            ]
            if let apache { environment["KONTO_APACHE_URL"] = apache.url }
            let run: ConversingProcess.Run
            do {
                run = try await ConversingProcess.run(python, ["-u", script], environment: environment, bound: ConsoleBrowserTests.bound) { line in
                    print("relying party: \(line)")
                    return nil
                }
            } catch {
                await apache?.stop()
                throw error
            }
            let apacheLog = apache?.errorLog() ?? ""
            await apache?.stop()
            #expect(!run.timedOut, "the relying party did not end within \(ConsoleBrowserTests.bound), so it was ended")
            #expect(ConsoleBrowserTests.failure(status: run.status, output: run.output) == nil, "the relying parties failed (exit \(run.status)); failure.png in \(screenshots):\n\(run.output.suffix(12_000))\n\(apacheLog)")

            // What the run left of the account (the consent it gave, the codes it used) is in the owner's copy of
            // their data, and goes with the account.
            let accountId = signedUp.session.accountId
            let rows = """
                SELECT 'consent:' || client_id FROM identity.oidc_consents WHERE account_id = '\(accountId)'
                UNION ALL SELECT 'code' FROM identity.oidc_codes WHERE account_id = '\(accountId)'
                UNION ALL SELECT 'grant' FROM identity.oidc_grants WHERE account_id = '\(accountId)'
                """
            let before = try await system.strings(rows)
            #expect(before.contains("consent:rp-study") && before.contains("code"), "\(before)")
            let owner = system.client()
            let token = try await owner.logIn(userId: userId, password: Self.password).session.token
            var request = HTTPClientRequest(url: system.gatewayURL + "/v1/account/export")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await system.http.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 1 << 22)
            let export = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            let applications = (export?["applications"] as? [[String: Any]])?.compactMap { $0["clientId"] as? String }
            #expect(response.status == .ok && applications?.contains("rp-study") == true, "\(String(describing: applications))")
            try await owner.deleteAccount(currentPassword: Self.password)
            #expect(try await system.strings(rows) == [], "the account's OpenID rows outlived it")

            // The registered client removed: its rows go (none left here), its secret works no more.
            let removed = try await operators.removeOpenIDClient(id: "rp-dashboard")
            #expect(removed.grantsEnded == 0)
            var introspect = HTTPClientRequest(url: system.gatewayURL + "/oauth2/introspect")
            introspect.method = .POST
            introspect.headers.add(name: "Authorization", value: "Basic " + Data("rp-dashboard:\(dashboardSecret)".utf8).base64EncodedString())
            introspect.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            introspect.body = .bytes(ByteBuffer(string: "token=anything"))
            #expect(try await system.http.execute(introspect, timeout: .seconds(15)).status == .unauthorized)
        }
    }

    /// Runs openssl (scripts/test.sh installs it) and fails with its output when it fails.
    static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " ")): \(String(decoding: output, as: UTF8.self))")
    }
}
