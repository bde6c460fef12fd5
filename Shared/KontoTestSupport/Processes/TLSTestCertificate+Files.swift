import Foundation
import KontoWire

extension TLSTestCertificate {
    /// Writes the certificate and its key into `directory` (made if missing) as PEM files, and returns the wire TLS
    /// settings that serve them and trust them (the certificate is its own CA), as a process reads them from
    /// `KONTO_WIRE_TLS_CERT`, `_KEY` and `_CA`.
    public static func files(in directory: URL) throws -> WireTLS {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        try certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return WireTLS(certificatePath: certificate, privateKeyPath: key, caPath: certificate)
    }
}
