import KontoWire
import NIOCore
import NIOSSL
import Testing

/// TLS is optional and transparent to the protocol: the same handshake runs inside it.
@Suite("TLS")
struct WireTLSTests {
    // A self-signed certificate for localhost/127.0.0.1 made for these tests only (valid until 2126).
    static let certificatePEM = """
-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUaJe5gJ8227cCVOJknSWlUEZr0pswCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMTIzMjcyOFoYDzIxMjYxMDI4
MjMyNzI4WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAStTsQ7QTyuaJh7YQm4n6bq+2LdGgRNSTa9rgkM3bOdmOzhe6o/LdET
dWwHsGBfOnJKJZxcZkZthQE7C8Z52igoo28wbTAdBgNVHQ4EFgQUsDkIL3sZzwUm
GmZD5zd0M5ASIBgwHwYDVR0jBBgwFoAUsDkIL3sZzwUmGmZD5zd0M5ASIBgwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSAAwRQIhALEn917P8r08xe6djh5c8bTEUZN2KMoI5yRO4MveIF1PAiBH
VAyFxXZDF7OexKaVXWxkJflu4uugHVudD0Rlnk79Pw==
-----END CERTIFICATE-----
"""
    static let privateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzZZZatq5nHxoAHc/
ws1zBJWVhjUUpASSB9l403dWzXGhRANCAAStTsQ7QTyuaJh7YQm4n6bq+2LdGgRN
STa9rgkM3bOdmOzhe6o/LdETdWwHsGBfOnJKJZxcZkZthQE7C8Z52igo
-----END PRIVATE KEY-----
"""

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
}
