import Foundation
import KontoTestSupport
import KontoWire
import NIOCore
import NIOSSL
import Testing

/// TLS is optional and transparent to the protocol: the same handshake runs inside it.
@Suite("TLS")
struct WireTLSTests {
    static let certificatePEM = TLSTestCertificate.certificatePEM
    static let privateKeyPEM = TLSTestCertificate.privateKeyPEM

    @Test("a client calls a server over TLS, trusting only the test certificate")
    func callOverTLS() async throws {
        let certificate = try NIOSSLCertificate(bytes: Array(Self.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(Self.privateKeyPEM.utf8), format: .pem)
        let serverTLS = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(key)
        ))
        var clientConfiguration = TLSConfiguration.makeClientConfiguration()
        clientConfiguration.trustRoots = .certificates([certificate])
        let clientTLS = try NIOSSLContext(configuration: clientConfiguration)

        let server = TestSupport.makeServer { $0.tlsContext = serverTLS }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server)) {
                $0.tlsContext = clientTLS
                $0.tlsServerHostname = "localhost"
                // A debug build's TLS handshake and hello on a machine running many suites can outlast the 3 s default.
                $0.connectTimeout = .seconds(30)
            }
            try await TestSupport.withRunning([client]) {
                let answer = try await client.call(TestSupport.echo, .init(text: "secure", number: 1))
                #expect(answer.text == "secure")
            }
        }
    }

    @Test("a plaintext peer cannot talk to a TLS server")
    func plaintextRefused() async throws {
        let certificate = try NIOSSLCertificate(bytes: Array(Self.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(Self.privateKeyPEM.utf8), format: .pem)
        let serverTLS = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(key)
        ))
        let server = TestSupport.makeServer { $0.tlsContext = serverTLS }
        try await TestSupport.withRunning([server]) {
            let raw = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            try await raw.send(WireFrame(correlationID: 1, message: .ping(.init())))
            // No wire frame ever comes back: the TLS layer refuses and closes.
            #expect(try await raw.framesUntilClose().isEmpty)
        }
    }

    /// The test certificate and key in files, as a deployment mounts them.
    static func files() throws -> (certificate: String, key: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-wire-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        try Self.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try Self.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return (certificate, key, directory)
    }

    @Test("TLS from the environment: none set is plain TCP; each missing or unreadable file is refused naming its variable")
    func fromEnvironment() throws {
        let (certificate, key, directory) = try Self.files()
        defer { try? FileManager.default.removeItem(at: directory) }
        func problem(_ variables: [String: String]) -> String? {
            do {
                _ = try WireTLS.fromEnvironment { variables[$0] }
                return nil
            } catch {
                return error.description
            }
        }
        #expect(try WireTLS.fromEnvironment { _ in nil } == nil)
        let all = ["KONTO_WIRE_TLS_CERT": certificate, "KONTO_WIRE_TLS_KEY": key, "KONTO_WIRE_TLS_CA": certificate]
        #expect(problem(all) == nil)
        #expect(problem(["KONTO_WIRE_TLS_CA": certificate]) == nil, "a process that only calls needs only the CA")
        #expect(problem(["KONTO_WIRE_TLS_CERT": certificate])?.hasPrefix("KONTO_WIRE_TLS_KEY is required") == true)
        #expect(problem(["KONTO_WIRE_TLS_KEY": key])?.hasPrefix("KONTO_WIRE_TLS_CERT is required") == true)
        #expect(problem(all.merging(["KONTO_WIRE_TLS_CERT": "/nonexistent.pem"]) { $1 })?.hasPrefix("KONTO_WIRE_TLS_CERT cannot be read") == true)
        #expect(problem(all.merging(["KONTO_WIRE_TLS_KEY": certificate]) { $1 })?.hasPrefix("KONTO_WIRE_TLS_KEY cannot be read") == true)
        #expect(problem(all.merging(["KONTO_WIRE_TLS_CA": key]) { $1 })?.hasPrefix("KONTO_WIRE_TLS_CA cannot be read") == true)
        // A server without a certificate, a client without a CA: refused when they are made.
        #expect(throws: WireTLS.ConfigurationError.self) { try WireTLS(caPath: certificate).serverContext() }
        #expect(throws: WireTLS.ConfigurationError.self) { try WireTLS(certificatePath: certificate, privateKeyPath: key).clientContext() }
        #expect(WireTLS.serverHostname(for: "identity") == "identity")
        #expect(WireTLS.serverHostname(for: "127.0.0.1") == nil && WireTLS.serverHostname(for: "::1") == nil)
    }

    @Test("configured from files, a client and a server talk over TLS, the client checking the server's address against its certificate")
    func fromFiles() async throws {
        let (certificate, key, directory) = try Self.files()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tls = WireTLS(certificatePath: certificate, privateKeyPath: key, caPath: certificate)
        let server = TestSupport.makeServer { try! $0.apply(tls) }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let client = TestSupport.makeClient(port: port) {
                try! $0.apply(tls)
                $0.connectTimeout = .seconds(30)
            }
            try await TestSupport.withRunning([client]) {
                let answer = try await client.call(TestSupport.echo, .init(text: "over tls", number: 2))
                #expect(answer.text == "over tls")
            }
        }
    }
}
