import Foundation
import KontoContracts
import KontoTesting
import KontoWire
import NIOCore
import NIOHTTP1
import Testing

/// The gateway and the services as separate processes on PostgreSQL: routes end to end, and a service stopped
/// and restarted under the gateway.
@Suite("Gateway with the services as processes", .serialized, .timeLimit(.minutes(5)))
struct GatewayProcessTests {
    @Test("every route through the real executables")
    func routes() async throws {
        try await GatewayHarness.withProcesses { gateway, _ in
            let (first, accountId) = try await gateway.signUp("lise@example.org", details: #"{"name":{"givenName":"Lise"}}"#)
            let account = try await gateway.request(.GET, "/v1/account", token: first)
            #expect(account.status == 200)
            #expect(account.object["accountId"] as? String == accountId)
            let etag = try #require(account.headers.first(name: "ETag"))
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"lise@example.org"}}"#, token: first, headers: [("If-Match", etag)]).status == 200)
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"remove":["email"]}"#, token: first, headers: [("If-Match", etag)]).status == 412)

            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"lise@example.org","password":"correct horse battery"}"#)
            #expect(login.status == 200)
            let second = try #require((login.object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"lise@example.org","password":"wrong password"}"#).status == 401)
            let reauthenticated = try await gateway.request(.POST, "/v1/account/reauthenticate", json: #"{"password":"correct horse battery"}"#, token: first)
            #expect(reauthenticated.status == 200)
            // A fresh token replaces the one presented.
            let token = try #require((reauthenticated.object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.GET, "/v1/account", token: first).status == 401)
            #expect(try await gateway.request(.PUT, "/v1/account/password", json: #"{"newPassword":"nuclear fission 1938"}"#, token: token).status == 200)
            #expect(try await gateway.request(.GET, "/v1/account", token: second).status == 401)
            #expect(try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"meitner@example.org"}"#, token: token).status == 204)
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"meitner@example.org","password":"nuclear fission 1938"}"#).status == 200)
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"meitner@example.org"}"#).status == 202)
            #expect(try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"nope","newPassword":"another horse battery"}"#).status == 403)
            #expect(try await gateway.request(.POST, "/v1/sessions/anonymous").status == 201)
            #expect(try await gateway.request(.GET, "/v1/schema").status == 200)
            #expect(try await gateway.request(.GET, "/health/live").status == 200)
            #expect(try await gateway.request(.GET, "/metrics").text.contains("konto_gateway_requests_total"))
            #expect(try await gateway.request(.GET, "/openapi.json").object["openapi"] as? String == "3.1.0")
            #expect(try await gateway.request(.DELETE, "/v1/sessions", token: token).status == 200)
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)

            let relogin = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"meitner@example.org","password":"nuclear fission 1938"}"#)
            let third = try #require((relogin.object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: third).status == 204)
            let fourth = try #require((try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"meitner@example.org","password":"nuclear fission 1938"}"#).object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.DELETE, "/v1/account", token: fourth).status == 204)
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"meitner@example.org","password":"nuclear fission 1938"}"#).status == 401)
        }
    }

    @Test("with wire TLS on (KONTO_WIRE_TLS_CERT, _KEY, _CA) and the gateway holding only its own key, the four processes serve a sign-up, a change, a login and a deletion")
    func overTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-process-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The wire TLS tests' certificate for localhost and 127.0.0.1, its own CA.
        let files = try TLSTestCertificate.files(in: directory)
        let certificate = try #require(files.certificatePath), key = try #require(files.privateKeyPath)
        let tls = ["KONTO_WIRE_TLS_CERT": certificate, "KONTO_WIRE_TLS_KEY": key, "KONTO_WIRE_TLS_CA": certificate]
        try await GatewayHarness.withProcesses(environment: tls) { gateway, stack in
            let (token, _) = try await gateway.signUp("tls@example.org")
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"dateOfBirth":"1815-12-10"}}"#, token: token).status == 200)
            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"tls@example.org","password":"correct horse battery"}"#)
            #expect(login.status == 200)
            #expect(try await gateway.request(.DELETE, "/v1/account", token: token).status == 204)
            // The services listen with TLS only: a plaintext wire client is not served.
            let port = try #require(stack.environment["KONTO_IDENTITY_PORT"].flatMap(Int.init))
            var configuration = WireClient.Configuration(port: port, serviceName: "gateway", serverName: IdentityContract.serviceName, secret: WireSecret(stack.wireSecret))
            configuration.connectionCount = 1
            configuration.connectTimeout = .seconds(5)
            let plain = WireClient(configuration: configuration, logger: GatewayHarness.logger)
            _ = try await RunningServices.with([plain], logger: GatewayHarness.logger) {
                await #expect(throws: (any Error).self) {
                    _ = try await plain.call(HealthContract.check, .init(), timeout: .seconds(5))
                }
            }
        }
    }

    @Test("with Profile, then Identity stopped: a read that needs it is 503 with Retry-After within the deadline; after a restart the same gateway answers again")
    func servicesStoppedAndRestarted() async throws {
        try await GatewayHarness.withProcesses { gateway, stack in
            let (token, _) = try await gateway.signUp("chien-shiung@example.org")
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)
            // One account read for the first time while each service is down: neither its session nor its details
            // are cached yet.
            let unread = ["konto-profile": try await gateway.signUp("lise@example.org").token, "konto-identity": try await gateway.signUp("emmy@example.org").token]

            for service in ["konto-profile", "konto-identity"] {
                await stack.kill(service)
                let start = ContinuousClock.now
                let down = try await gateway.request(.GET, "/v1/account", token: unread[service]!)
                #expect(down.status == 503, "\(service) down")
                #expect(down.headers.first(name: "Retry-After") != nil, "\(service) down")
                #expect(down.code == "gateway.serviceUnavailable", "\(service) down")
                // Within the upstream deadline (3 s here), with room for a loaded machine.
                #expect(ContinuousClock.now - start < .seconds(8), "\(service) down")
                #expect(try await gateway.request(.GET, "/health/ready").status == 503)

                try stack.restart(service)
                let back = try await gateway.eventually(200, .GET, "/v1/account", token: unread[service]!)
                #expect(back.status == 200, "after \(service) restarted")
            }
            #expect(try await gateway.eventually(200, .GET, "/health/ready").status == 200)
        }
    }
}
