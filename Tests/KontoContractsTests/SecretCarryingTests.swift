import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import Synchronization
import Testing

/// Secrets travel only in requests of methods a contract declares as carrying them.
@Suite("Secrets on the wire")
struct SecretCarryingTests {
    struct SignUp: Codable, Sendable {
        var userId: String
        var password: SecretString
        var details: AccountDetails
    }

    struct Details: Codable, Sendable {
        var details: AccountDetails
    }

    static let carrying = WireMethod<SignUp, Details>.carryingSecrets("test.signUp")
    static let plain = WireMethod<SignUp, Details>("test.plain")
    static let plainDetails = WireMethod<Details, Details>("test.plainDetails")
    static let carryingDetails = WireMethod<Details, Details>.carryingSecrets("test.carryingDetails")

    static var detailsWithPassword: AccountDetails {
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[\.password] = "correct horse battery"
        return details
    }

    @Test("a contract says which methods carry secrets")
    func declared() {
        #expect(Self.carrying.carriesSecrets)
        #expect(!Self.plain.carriesSecrets)
    }

    @Test("over the wire, a secret-carrying request arrives with its password; the response never carries one")
    func carried() async throws {
        let received = ReceivedSecrets()
        try await Self.withServer(received: received) { client in
            let answer = try await client.call(Self.carrying, SignUp(userId: "ada@example.org", password: SecretString("hunter2 hunter2"), details: Self.detailsWithPassword))
            #expect(answer.details[\.password] == nil)
            #expect(answer.details[\.userId] == "ada@example.org")
            let detailsAnswer = try await client.call(Self.carryingDetails, Details(details: Self.detailsWithPassword))
            #expect(detailsAnswer.details[\.password] == nil)
        }
        #expect(received.values == ["hunter2 hunter2", "correct horse battery", "correct horse battery"])
    }

    @Test("any other method refuses a SecretString before sending, and leaves the password out of details")
    func notCarried() async throws {
        let received = ReceivedSecrets()
        try await Self.withServer(received: received) { client in
            let error = await #expect(throws: WireError.self) {
                _ = try await client.call(Self.plain, SignUp(userId: "u", password: SecretString("hunter2 hunter2"), details: AccountDetails()))
            }
            #expect(error?.code == WireError.Code.badPayload)
            _ = try await client.call(Self.plainDetails, Details(details: Self.detailsWithPassword))
        }
        // Only the details call arrived, without the password.
        #expect(received.values == ["<none>"])
    }

    @Test("a SecretString never prints")
    func neverPrinted() {
        let secret = SecretString("hunter2 hunter2")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        #expect(!"\(SignUp(userId: "u", password: secret, details: AccountDetails()))".contains("hunter2"))
    }

    final class ReceivedSecrets: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ value: String) { storage.withLock { $0.append(value) } }
        var values: [String] { storage.withLock { $0 } }
    }

    static func withServer(received: ReceivedSecrets, _ body: @Sendable (WireClient) async throws -> Void) async throws {
        let secret = WireSecret("secret-carrying-tests-\(UInt64.random(in: 0 ... .max))")
        let server = WireServer(configuration: .init(port: 0, serverName: "test", secret: secret), logger: Logger(label: "test"))
        server.register(carrying) { request, _ in
            received.append(request.password.value)
            received.append(request.details[\.password] ?? "<none>")
            return Details(details: request.details)
        }
        server.register(plain) { request, _ in
            received.append(request.password.value)
            return Details(details: request.details)
        }
        for method in [plainDetails, carryingDetails] {
            server.register(method) { request, _ in
                received.append(request.details[\.password] ?? "<none>")
                return request
            }
        }
        try await RunningServices.with([server], logger: Logger(label: "test")) {
            let port = try await server.localAddress().port!
            let client = WireClient(configuration: .init(port: port, serviceName: "test-client", serverName: "test", secret: secret), logger: Logger(label: "test"))
            try await RunningServices.with([client], logger: Logger(label: "test")) {
                try await body(client)
            }
        }
    }
}
