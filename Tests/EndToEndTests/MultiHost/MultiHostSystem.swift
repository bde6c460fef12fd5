import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoTestSupport
import Logging
import NIOCore
import NIOHTTP1

/// Konto on several machines, made on this one: PostgreSQL on host `db`, every service on each of hosts `a` and `b`
/// (network namespaces joined by a bridge, ``VirtualNetwork``), Debian's HAProxy in front of the two gateways, and
/// the webhook receivers on the bridge. Both hosts run the same configuration with the same root key, as replicas of
/// one deployment do.
struct MultiHostSystem: Sendable {
    static let hosts = ["a", "b"]

    let network: VirtualNetwork
    /// Host `a`'s view as the single-host tests know it: the database, the receivers, `a`'s stack.
    let system: EndToEndSystem
    let stacks: [String: KontoProcessStack]
    let proxy: HAProxy
    /// Where every service on both hosts sends its traces (on the bridge).
    let traces: OTLPReceiver
    /// The SMTP server both hosts' couriers send to (aiosmtpd, on the bridge).
    let mail: MailCatcher

    var cluster: TemporaryPostgresCluster { system.cluster }

    func stack(_ host: String) throws -> KontoProcessStack {
        guard let stack = stacks[host] else { throw EndToEndError("no host \(host)") }
        return stack
    }

    /// Requests to one host's gateway, or (nil) through HAProxy.
    func http(via host: String?) throws -> RawHTTP {
        RawHTTP(system: system, baseURL: try host.map { try stack($0).gatewayURL } ?? proxy.url)
    }

    /// A client (a session of its own) through HAProxy.
    func client() -> KontoClient {
        KontoClient(gatewayURL: proxy.url, httpClient: system.http, timeout: .seconds(15))
    }

    static func with<Result: Sendable>(environment: [String: String] = [:], _ body: (MultiHostSystem) async throws -> Result) async throws -> Result {
        let network = try await VirtualNetwork.create(hosts: ["db"] + hosts)
        var cluster: TemporaryPostgresCluster?
        var mailer: WebhookReceiver?
        var audit: WebhookReceiver?
        var stacks: [String: KontoProcessStack] = [:]
        var proxy: HAProxy?
        var traces: OTLPReceiver?
        var mail: MailCatcher?
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        // One request per connection. Measured: after a host died, a kept-alive connection to HAProxy that had last
        // been served by that host was sometimes closed by HAProxy, and the pool's next request on it failed with
        // remoteConnectionClosed before HAProxy read it (HAProxy logged no such request): 1 to 3 of about 500 calls in
        // each of 9 runs of the host loss, none in 5 runs with one request per connection. Browsers and URLSession send such a
        // request again on a new connection; AsyncHTTPClient does not, so the rehearsal's client does not keep them.
        configuration.maximumUsesPerConnection = 1
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let webhooksFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-multihost-webhooks-\(UUID().uuidString).yaml").path
        func tearDown() async {
            for stack in stacks.values { await stack.stopAll() }
            await proxy?.stop()
            try? await http.shutdown()
            await mailer?.stop()
            await audit?.stop()
            await traces?.stop()
            await mail?.stop()
            try? FileManager.default.removeItem(atPath: webhooksFile)
            try? await cluster?.destroy()
            await network.destroy()
        }
        do {
            cluster = try await TemporaryPostgresCluster.start(on: try network.host("db"), logger: EndToEndSystem.logger)
            let database = try await TestDatabase.createDatabase(on: cluster!.maintenanceDatabase, logger: EndToEndSystem.logger)
            mailer = try await WebhookReceiver.start(statuses: [.noContent], host: network.bridgeAddress)
            audit = try await WebhookReceiver.start(statuses: [.noContent], host: network.bridgeAddress)
            traces = try await OTLPReceiver.start(host: network.bridgeAddress)
            mail = try await MailCatcher.start(host: network.bridgeAddress)
            try EndToEndSystem.writeWebhooks(mailer: mailer!, audit: audit!, host: network.bridgeAddress, to: webhooksFile)
            var settings = try EndToEndSystem.baseSettings(webhooksFile: webhooksFile)
            // One root for both hosts, as a deployment's replicas share their keys.
            settings["KONTO_WIRE_SECRET"] = "multi-host-" + UUID().uuidString
            // Clients are told apart by HAProxy's X-Forwarded-For; HAProxy reaches the hosts from the bridge.
            settings["KONTO_GATEWAY_CLIENT_ADDRESS_HEADER"] = "X-Forwarded-For"
            settings["KONTO_GATEWAY_TRUSTED_PROXIES"] = network.bridgeAddress
            // Both hosts' couriers send every mail to one SMTP server, as a deployment's replicas do.
            settings["KONTO_MAIL_SMTP_URL"] = "smtp://\(network.bridgeAddress):\(mail!.port)?tls=none"
            settings["KONTO_MAIL_FROM"] = "Konto <accounts@example.org>"
            settings["KONTO_PUBLIC_URL"] = "http://konto.example.org"
            settings.merge(TracingTests.environment(traces!)) { _, given in given }
            settings.merge(environment) { _, given in given }
            for name in hosts {
                // Each host's spans say which host made them, as a node's resource detector would.
                let host = settings.merging(["OTEL_RESOURCE_ATTRIBUTES": "host.name=\(name)"]) { _, given in given }
                stacks[name] = try KontoProcessStack(databaseURL: database.url, environment: host, on: try network.host(name), of: network)
            }
            proxy = try await HAProxy.start(servers: try hosts.map { name in
                HAProxy.Server(name: name, address: try network.host(name).address, port: try stacks[name]!.gatewayPort)
            })
            let system = MultiHostSystem(
                network: network,
                system: EndToEndSystem(cluster: cluster!, database: database, stack: stacks["a"]!, mailer: mailer!, audit: audit!, http: http),
                stacks: stacks,
                proxy: proxy!,
                traces: traces!,
                mail: mail!
            )
            try await system.waitUntilReady()
            let result = try await body(system)
            await tearDown()
            return result
        } catch {
            let logs = stacks.sorted { $0.key < $1.key }.map { "=== host \($0.key)\n" + $0.value.logTails(lines: 200) }.joined(separator: "\n")
            await tearDown()
            if !logs.isEmpty { print("multi-host: the services' last log lines\n\(logs)") }
            throw error
        }
    }

    /// Waits (bounded) until each gateway reports itself ready and HAProxy counts both up.
    func waitUntilReady(within bound: Duration = .seconds(90)) async throws {
        for host in Self.hosts {
            let http = try http(via: host)
            try await EndToEndSystem.waitUntil(within: bound, "host \(host)'s gateway is ready") {
                (try? await http.send("GET", "/health/ready").status) == 200
            }
        }
        try await EndToEndSystem.waitUntil(within: bound, "HAProxy counts every gateway up") {
            let states = try await proxy.serverStates()
            return Self.hosts.allSatisfy { states[$0]?.status == "UP" }
        }
    }
}
