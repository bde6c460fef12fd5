import ArgumentParser
import Crypto
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWebAuthn
import KontoWire
import Logging
import PostgresNIO

/// `konto-bench oidc`: Konto as an OpenID Provider, Identity over the wire on PostgreSQL — authorization-code exchanges
/// per second (each signs an access token and an ID token and redeems the code in one transaction) and refreshes per
/// second (each rotates the refresh token in one transaction and signs both tokens again) — against the raw ES256
/// signing rate of the same machine and concurrency: two signatures are the least an exchange costs, so the ratio is
/// the exchange rate over half the signing rate.
struct OpenIDBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oidc",
        abstract: "OpenID Provider: code exchanges and refreshes per second over the wire vs the raw ES256 signing rate (loopback)."
    )

    static let secret = "konto-bench-oidc-secret-0123456789abcdef"
    static let clientSecret = "konto-bench-oidc-client-secret-0123456789"
    static let redirectURI = "https://dashboard.example.org/callback"

    @Option(help: "Concurrent callers (wire calls in flight; signing tasks for the baseline).")
    var connections: Int = 8

    @Option(help: "Runs of each measurement, alternating; medians are reported.")
    var runs: Int = 3

    @Option(help: "Code exchanges per run (their codes are made before the clock starts).")
    var exchanges: Int = 2_000

    @Option(help: "Refreshes per run.")
    var refreshes: Int = 2_000

    @Option(help: "Signatures per baseline run.")
    var signatures: Int = 20_000

    func run() async throws {
        guard (1...64).contains(connections), (1...9).contains(runs), (100...100_000).contains(exchanges), (100...100_000).contains(refreshes),
              (1_000...1_000_000).contains(signatures)
        else {
            throw ValidationError("bounded runs only: connections 1–64, runs 1–9, exchanges and refreshes 100–100,000, signatures 1,000–1,000,000")
        }
        var logger = Logger(label: "konto.bench")
        logger.logLevel = .warning
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            // One account and console session per caller.
            try await SessionBenchmark.seed(database, rows: connections, logger: logger)
            let samples = try await measure(database, logger: logger)
            report(samples)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    struct Sample {
        var exchangesPerSecond: Double
        var refreshesPerSecond: Double
        var signaturesPerSecond: Double
    }

    private func measure(_ database: PostgresTestDatabase, logger: Logger) async throws -> [Sample] {
        let settings = PostgresSettings(
            host: database.host, port: database.port, username: database.username, password: database.password, database: database.database
        )
        let signingKey = P256.Signing.PrivateKey()
        var provider = try OpenIDProviderSettings(
            issuer: "https://accounts.example.org", keys: OpenIDSigningKeys([OpenIDSigningKey(pem: signingKey.pemRepresentation)]),
            clients: OpenIDClients([
                OpenIDClient(
                    id: "dashboard", name: "Dashboard",
                    authentication: .secret(method: "client_secret_basic", digest: Array(SHA256.hash(data: Data(Self.clientSecret.utf8)))),
                    redirectURIs: [Self.redirectURI], scopes: ["openid", "email", "offline_access"], isFirstParty: true
                ),
            ])
        )
        // The codes of a run are all made before its clock starts.
        provider.codeLifetime = .seconds(30 * 60)
        var configuration = IdentityServiceConfiguration(port: 0, secret: WireSecret(Self.secret), database: settings, profilePort: 1)
        configuration.options.openID = provider
        let server = try IdentityServer(configuration: configuration, logger: logger)
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let client = WireClient(
                configuration: .init(port: port, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(Self.secret)),
                logger: logger
            )
            return try await RunningServices.with([client], logger: logger) {
                var samples: [Sample] = []
                for _ in 0..<runs {
                    let codes = try await codes(client)
                    let (exchangeSeconds, refreshTokens) = try await exchange(codes, client: client)
                    let refreshSeconds = try await refresh(refreshTokens, client: client)
                    let signingSeconds = try await sign(with: signingKey)
                    samples.append(Sample(
                        exchangesPerSecond: Double(exchanges) / exchangeSeconds, refreshesPerSecond: Double(refreshes) / refreshSeconds,
                        signaturesPerSecond: Double(signatures) / signingSeconds
                    ))
                }
                return samples
            }
        }
    }

    /// `exchanges` codes with their PKCE verifiers, made through each caller's session (untimed).
    private func codes(_ client: WireClient) async throws -> [[(code: String, verifier: String)]] {
        let perCaller = (exchanges + connections - 1) / connections
        return try await withThrowingTaskGroup(of: [(code: String, verifier: String)].self) { group in
            for caller in 1...connections {
                group.addTask {
                    var made: [(code: String, verifier: String)] = []
                    for _ in 0..<perCaller {
                        let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
                        let challenge = Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
                        let parameters = [
                            ("response_type", "code"), ("client_id", "dashboard"), ("redirect_uri", Self.redirectURI), ("scope", "openid email offline_access"),
                            ("state", "s"), ("nonce", "n"), ("code_challenge", challenge), ("code_challenge_method", "S256"),
                        ].map { IdentityOpenIDParameter($0.0, $0.1) }
                        let answer = try await client.call(IdentityContract.openIDAuthorize, IdentityOpenIDAuthorizeRequest(
                            token: BearerToken("bench-token-\(caller)"), parameters: parameters, requestedAt: .now
                        ))
                        guard let code = answer.location.flatMap(URLComponents.init(string:))?.queryItems?.first(where: { $0.name == "code" })?.value else {
                            throw ValidationError("authorize gave no code: \(answer)")
                        }
                        made.append((code, verifier))
                    }
                    return made
                }
            }
            var all: [[(code: String, verifier: String)]] = []
            for try await made in group { all.append(made) }
            return all
        }
    }

    static let dashboard = IdentityOpenIDClientCredentials(basicId: "dashboard", basicSecret: SecretString(clientSecret))

    /// Exchanges the first `exchanges` codes, the callers at once; the seconds it took and one refresh token per caller.
    private func exchange(_ codes: [[(code: String, verifier: String)]], client: WireClient) async throws -> (Double, [BearerToken]) {
        var remaining = exchanges
        var shares: [[(code: String, verifier: String)]] = []
        for callerCodes in codes {
            shares.append(Array(callerCodes.prefix(remaining)))
            remaining -= shares.last!.count
        }
        let start = ContinuousClock.now
        let tokens = try await withThrowingTaskGroup(of: BearerToken?.self) { group in
            for share in shares {
                group.addTask {
                    var last: BearerToken?
                    for (code, verifier) in share {
                        let answer = try await client.call(IdentityContract.openIDToken, IdentityOpenIDTokenRequest(
                            client: Self.dashboard, grantType: "authorization_code", code: SecretString(code), redirectURI: Self.redirectURI,
                            codeVerifier: SecretString(verifier)
                        ))
                        guard let tokens = answer.tokens, tokens.idToken != nil, let refreshToken = tokens.refreshToken else {
                            throw ValidationError("the exchange was refused: \(String(describing: answer.error))")
                        }
                        last = refreshToken
                    }
                    return last
                }
            }
            var all: [BearerToken] = []
            for try await token in group { if let token { all.append(token) } }
            return all
        }
        return (Self.seconds(ContinuousClock.now - start), tokens)
    }

    /// `refreshes` rotations, each caller along its own grant's chain; the seconds it took.
    private func refresh(_ tokens: [BearerToken], client: WireClient) async throws -> Double {
        let perChain = (refreshes + tokens.count - 1) / tokens.count
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for token in tokens {
                group.addTask {
                    var current = token
                    for _ in 0..<perChain {
                        let answer = try await client.call(IdentityContract.openIDToken, IdentityOpenIDTokenRequest(
                            client: Self.dashboard, grantType: "refresh_token", refreshToken: SecretString(current.value)
                        ))
                        guard let next = answer.tokens?.refreshToken else { throw ValidationError("the refresh was refused: \(String(describing: answer.error))") }
                        current = next
                    }
                }
            }
            try await group.waitForAll()
        }
        return Self.seconds(ContinuousClock.now - start) * Double(refreshes) / Double(perChain * tokens.count)
    }

    /// The baseline: `signatures` ES256 signatures (swift-crypto's P-256, BoringSSL) over an ID token's signing input,
    /// the callers at once; the seconds it took.
    private func sign(with key: P256.Signing.PrivateKey) async throws -> Double {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"bench","typ":"JWT"}"#.utf8))
        let claims = Base64URL.encode(Array(
            #"{"iss":"https://accounts.example.org","sub":"acc-1","aud":["dashboard"],"exp":1900000000,"iat":1800000000,"auth_time":1800000000,"nonce":"n","acr":"aal1","amr":["pwd"],"azp":"dashboard"}"#.utf8
        ))
        let input = Data("\(header).\(claims)".utf8)
        let perCaller = signatures / connections
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    for _ in 0..<perCaller { _ = try key.signature(for: input) }
                }
            }
            try await group.waitForAll()
        }
        return Self.seconds(ContinuousClock.now - start) * Double(signatures) / Double(perCaller * connections)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func report(_ samples: [Sample]) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print("OpenID Provider over the wire on PostgreSQL vs raw ES256 signing, \(connections) callers, \(runs) runs of \(exchanges) exchanges, \(refreshes) refreshes, \(signatures) signatures")
        print("  run  exchanges/s  refreshes/s  ES256 signatures/s")
        for (index, sample) in samples.enumerated() {
            print(String(format: "  %3d  %11.0f  %11.0f  %18.0f", index + 1, sample.exchangesPerSecond, sample.refreshesPerSecond, sample.signaturesPerSecond))
        }
        let exchangesPerSecond = median(samples.map(\.exchangesPerSecond))
        let refreshesPerSecond = median(samples.map(\.refreshesPerSecond))
        let signaturesPerSecond = median(samples.map(\.signaturesPerSecond))
        // Two signatures an exchange (the access token and the ID token): the signing bound is half the signing rate.
        let bound = signaturesPerSecond / 2
        print(String(
            format: "konto-bench oidc: ratio=%.3f target=%.2f exchanges_per_s=%.0f refreshes_per_s=%.0f refresh_ratio=%.3f es256_signatures_per_s=%.0f connections=%d",
            exchangesPerSecond / bound, Self.target, exchangesPerSecond, refreshesPerSecond, refreshesPerSecond / bound, signaturesPerSecond, connections
        ))
    }

    static let target = 0.1
}
