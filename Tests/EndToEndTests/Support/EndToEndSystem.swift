import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoContracts
import KontoTestSupport
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO

/// The system as docker-compose runs it: konto-notifications, konto-profile, konto-identity and konto-gateway as
/// processes on loopback, a PostgreSQL cluster of the test's own (so it can be restarted), the deployment's account
/// schema (deploy/accounts.yaml), and two webhook endpoints — a mailer that receives `passwordResetRequested` and an
/// audit log that receives every event.
struct EndToEndSystem: Sendable {
    let cluster: TemporaryPostgresCluster
    let database: PostgresTestDatabase
    let stack: KontoProcessStack
    let mailer: WebhookReceiver
    let audit: WebhookReceiver
    let http: HTTPClient

    /// Standard Webhooks secrets (`whsec_` + base64 of 24 bytes or more).
    static let mailerSecret = "whsec_a29udG8tZTJlLW1haWxlci1zZWNyZXQtMDEyMzQ1Njc4OWFi"
    static let auditSecret = "whsec_a29udG8tZTJlLWF1ZGl0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZA=="
    static let logger: Logger = {
        var logger = Logger(label: "konto.end-to-end")
        logger.logLevel = .error
        return logger
    }()

    var gatewayURL: String { stack.gatewayURL }

    /// A client of the gateway with a session of its own. A call that gets no answer within 15 s fails
    /// (`client.unreachable`) instead of hanging, and a refused connection fails at once (no retries).
    func client() -> KontoClient {
        KontoClient(gatewayURL: gatewayURL, httpClient: http, timeout: .seconds(15))
    }

    /// Starts everything, runs `body`, and stops everything (also when `body` throws). `environment` is added to
    /// every service's.
    static func with<Result: Sendable>(
        environment: [String: String] = [:],
        _ body: (EndToEndSystem) async throws -> Result
    ) async throws -> Result {
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        var mailer: WebhookReceiver?
        var audit: WebhookReceiver?
        var stack: KontoProcessStack?
        var configuration = HTTPClient.Configuration()
        // A refused connection is an answer here (the gateway is down), not something to retry until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let webhooksFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-e2e-webhooks-\(UUID().uuidString).yaml").path
        func tearDown() async {
            await stack?.stopAll()
            try? await http.shutdown()
            await mailer?.stop()
            await audit?.stop()
            try? FileManager.default.removeItem(atPath: webhooksFile)
            try? await cluster.destroy()
        }
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            mailer = try await WebhookReceiver.start(statuses: [.noContent])
            audit = try await WebhookReceiver.start(statuses: [.noContent])
            try writeWebhooks(mailer: mailer!, audit: audit!, host: "127.0.0.1", to: webhooksFile)
            var settings = try baseSettings(webhooksFile: webhooksFile)
            settings["KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE"] = "0"
            settings["KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE"] = "0"
            settings.merge(environment) { _, given in given }
            stack = try KontoProcessStack(databaseURL: database.url, environment: settings, operators: ["operator-billing"])
            let system = EndToEndSystem(cluster: cluster, database: database, stack: stack!, mailer: mailer!, audit: audit!, http: http)
            try await system.waitUntilReady()
            let result = try await body(system)
            await tearDown()
            return result
        } catch {
            let logs = stack?.logTails(lines: 400) ?? ""
            await tearDown()
            if !logs.isEmpty { print("end-to-end: the services' last log lines\n\(logs)") }
            throw error
        }
    }

    /// The webhook endpoints of `mailer` and `audit`, listening on `host`: plain http, which the endpoints must allow
    /// with insecure: true.
    static func writeWebhooks(mailer: WebhookReceiver, audit: WebhookReceiver, host: String, to path: String) throws {
        try """
        - name: mailer
          url: http://\(host):\(mailer.port)/konto/events
          secret: \(mailerSecret)
          types: [passwordResetRequested]
          insecure: true
        - name: audit
          url: http://\(host):\(audit.port)/konto/events
          secret: \(auditSecret)
          insecure: true
        """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// What every end-to-end system's services start with: the deployment's key schema, the webhooks in
    /// `webhooksFile`, a fast poll and a 3 s upstream bound.
    static func baseSettings(webhooksFile: String) throws -> [String: String] {
        [
            "KONTO_ACCOUNTS_CONFIG": try repositoryFile("deploy/accounts.yaml"),
            "KONTO_NOTIFICATIONS_WEBHOOKS": webhooksFile,
            "KONTO_NOTIFICATIONS_POLL_MS": "100",
            "KONTO_GATEWAY_UPSTREAM_TIMEOUT_MS": "3000",
        ]
    }

    /// Waits (bounded) until the gateway reports itself and every service behind it ready.
    func waitUntilReady(within bound: Duration = .seconds(90)) async throws {
        try await Self.waitUntil(within: bound, "the system is ready") { try await readiness() == 200 }
    }

    /// Checks `condition` until it holds, for at most `bound`: the system settles asynchronously (a restarted service
    /// becomes ready, events are relayed and delivered, deletions propagate), so the tests poll as an operator would.
    static func waitUntil(within bound: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw EndToEndError("not within \(bound): \(what)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// `/health/ready`'s status, 0 when the gateway cannot be reached.
    func readiness() async throws -> Int {
        var request = HTTPClientRequest(url: gatewayURL + "/health/ready")
        request.method = .GET
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            return Int(response.status.code)
        } catch {
            return 0
        }
    }

    // MARK: Webhooks

    /// The events a webhook endpoint received, in arrival order, each checked for the endpoint's signature.
    static func events(receivedBy receiver: WebhookReceiver, secret: String) throws -> [[String: Any]] {
        try receiver.requests.map { request in
            guard let id = request.headers.first(name: WebhookSignature.idHeader),
                  let timestamp = request.headers.first(name: WebhookSignature.timestampHeader).flatMap({ Int64($0) }),
                  let signature = request.headers.first(name: WebhookSignature.signatureHeader),
                  WebhookSignature.verify(secret: secret, id: id, timestamp: timestamp, body: request.body, signature: signature)
            else {
                throw EndToEndError("a webhook request without a valid signature")
            }
            guard let event = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
                throw EndToEndError("a webhook body that is not an event object")
            }
            return event
        }
    }

    /// Waits (bounded) until the mailer has received a reset for `userId`, and returns its token.
    func resetToken(for userId: String, within bound: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + bound
        var seen = 0
        while true {
            let events = try Self.events(receivedBy: mailer, secret: Self.mailerSecret)
            if let token = events.last(where: { $0["type"] as? String == "passwordResetRequested" && $0["userId"] as? String == userId })?["token"] as? String {
                return token
            }
            seen = events.count
            guard ContinuousClock.now < deadline else { throw EndToEndError("no passwordResetRequested for \(userId) reached the mailer within \(bound)") }
            _ = await mailer.waitForRequests(seen + 1, within: deadline - ContinuousClock.now)
        }
    }

    // MARK: The databases

    /// Runs `body` with a connection to the system's database (a new one each time: PostgreSQL may have restarted).
    func withDatabase<Result: Sendable>(_ body: (PostgresClient) async throws -> Result) async throws -> Result {
        try await TestDatabase.withClient(database, logger: Self.logger, body)
    }

    /// The first column of every row of `sql` (fixed text, no parameters), as strings.
    func strings(_ sql: String) async throws -> [String] {
        try await withDatabase { client in
            var values: [String] = []
            for try await (value) in try await client.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger).decode(String.self) {
                values.append(value)
            }
            return values
        }
    }

    /// `SELECT count(*)` of `sql`'s rows.
    func count(_ sql: String) async throws -> Int {
        try await withDatabase { client in
            var total = 0
            for try await (value) in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM (\(sql)) AS rows"), logger: Self.logger).decode(Int.self) {
                total = value
            }
            return total
        }
    }

    /// A file of the repository, found from this source file.
    static func repositoryFile(_ relative: String, filePath: String = #filePath) throws -> String {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
            directory.deleteLastPathComponent()
        }
        throw EndToEndError("\(relative) not found above \(filePath)")
    }
}

struct EndToEndError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
