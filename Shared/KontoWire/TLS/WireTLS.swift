import NIOSSL

/// TLS on the wire, from PEM files: a server presents its certificate chain and key; a client verifies the server's
/// chain against the CA, and the server's name (or address) against the certificate. The handshake's proofs run
/// inside it unchanged (docs/PROTOCOL.md).
public struct WireTLS: Sendable, Equatable {
    public static let certificateVariable = "KONTO_WIRE_TLS_CERT"
    public static let privateKeyVariable = "KONTO_WIRE_TLS_KEY"
    public static let caVariable = "KONTO_WIRE_TLS_CA"

    /// This process's certificate chain (PEM), which it presents as a server.
    public var certificatePath: String?
    /// Its private key (PEM).
    public var privateKeyPath: String?
    /// The CA (PEM) the services' certificates are checked against, as a client.
    public var caPath: String?

    public init(certificatePath: String? = nil, privateKeyPath: String? = nil, caPath: String? = nil) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.caPath = caPath
    }

    /// A setting that cannot be used, named by its variable.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        public var variable: String
        public var problem: String
        public var description: String { "\(variable) \(problem)" }
    }

    /// From `KONTO_WIRE_TLS_CERT`, `_KEY` and `_CA`: nil when none is set (plain TCP). A certificate needs its key
    /// and the other way round; every file named must be readable PEM, checked here so a bad one stops the start.
    public static func fromEnvironment(_ value: (String) -> String?) throws(ConfigurationError) -> WireTLS? {
        let tls = WireTLS(certificatePath: value(certificateVariable), privateKeyPath: value(privateKeyVariable), caPath: value(caVariable))
        guard tls.certificatePath != nil || tls.privateKeyPath != nil || tls.caPath != nil else { return nil }
        if tls.certificatePath != nil, tls.privateKeyPath == nil {
            throw ConfigurationError(variable: privateKeyVariable, problem: "is required with \(certificateVariable)")
        }
        if tls.privateKeyPath != nil, tls.certificatePath == nil {
            throw ConfigurationError(variable: certificateVariable, problem: "is required with \(privateKeyVariable)")
        }
        if tls.certificatePath != nil { _ = try tls.serverContext() }
        if tls.caPath != nil { _ = try tls.clientContext() }
        return tls
    }

    /// What a server presents. - Throws: when no certificate and key are configured, or they cannot be read.
    public func serverContext() throws(ConfigurationError) -> NIOSSLContext {
        guard let certificatePath, let privateKeyPath else {
            throw ConfigurationError(variable: Self.certificateVariable, problem: "and \(Self.privateKeyVariable) are required to serve over TLS")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ConfigurationError(variable: Self.certificateVariable, problem: "cannot be read as PEM certificates at \(certificatePath)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        } catch {
            throw ConfigurationError(variable: Self.privateKeyVariable, problem: "cannot be read as a PEM private key at \(privateKeyPath)")
        }
        do {
            return try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        } catch {
            throw ConfigurationError(variable: Self.privateKeyVariable, problem: "does not go with the certificate in \(Self.certificateVariable)")
        }
    }

    /// What a client verifies servers with. - Throws: when no CA is configured, or it cannot be read.
    public func clientContext() throws(ConfigurationError) -> NIOSSLContext {
        guard let caPath else {
            throw ConfigurationError(variable: Self.caVariable, problem: "is required to call services over TLS")
        }
        let roots: [NIOSSLCertificate]
        do {
            roots = try NIOSSLCertificate.fromPEMFile(caPath)
        } catch {
            throw ConfigurationError(variable: Self.caVariable, problem: "cannot be read as PEM certificates at \(caPath)")
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(roots)
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError(variable: Self.caVariable, problem: "cannot be used as trust roots")
        }
    }

    /// The name a client checks the server's certificate for: its host, unless that is an address (then the
    /// certificate must name the address, which TLS checks against the connection's peer).
    public static func serverHostname(for host: String) -> String? {
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return isAddress ? nil : host
    }
}

extension WireClient.Configuration {
    /// Calls over TLS, verifying the server, when `tls` is set.
    public mutating func apply(_ tls: WireTLS?) throws(WireTLS.ConfigurationError) {
        guard let tls else { return }
        tlsContext = try tls.clientContext()
        tlsServerHostname = WireTLS.serverHostname(for: host)
    }
}

extension WireServer.Configuration {
    /// Serves over TLS when `tls` is set.
    public mutating func apply(_ tls: WireTLS?) throws(WireTLS.ConfigurationError) {
        guard let tls else { return }
        tlsContext = try tls.serverContext()
    }
}
