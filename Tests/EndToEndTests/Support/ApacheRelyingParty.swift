import AsyncHTTPClient
import Foundation
import KontoTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Apache httpd with mod_auth_openidc (Debian's apache2 and libapache2-mod-auth-openidc, which scripts/test.sh
/// installs) on loopback: a dashboard registered with Konto as `rp-apache`, configured from Tests/OIDC/apache. An
/// off-the-shelf relying party no one here wrote, judging Konto as an OpenID Provider beside Authlib.
final class ApacheRelyingParty: Sendable {
    static let executable = "/usr/sbin/apache2"
    static let module = "/usr/lib/apache2/modules/mod_auth_openidc.so"

    let url: String
    let folder: URL
    /// A watchdog ends it should the test process end first.
    private let process: ServiceProcess

    private init(url: String, folder: URL, process: ServiceProcess) {
        self.url = url
        self.folder = folder
        self.process = process
    }

    /// Starts it and waits (at most 20 s) until it answers; nil where Apache or the module is missing outside CI (an
    /// issue recorded on CI, which installs both).
    static func start(folder: URL, port: Int, issuer: String, secret: String, http: HTTPClient) async throws -> ApacheRelyingParty? {
        guard FileManager.default.isExecutableFile(atPath: executable), FileManager.default.fileExists(atPath: module) else {
            if ConsoleBrowserTests.onCI { Issue.record("CI is set, but Apache httpd or mod_auth_openidc is missing: scripts/test.sh installs them") }
            return nil
        }
        let source = URL(fileURLWithPath: try EndToEndSystem.repositoryFile("Tests/OIDC/apache/httpd.conf")).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source.appendingPathComponent("htdocs"), to: folder.appendingPathComponent("htdocs"))
        // Started as root (CI), Apache's children run as www-data; otherwise as whoever started it (User is ignored).
        let root = getuid() == 0
        let values = [
            "@DIR@": folder.path, "@PORT@": "\(port)", "@ISSUER@": issuer, "@SECRET@": secret,
            "@PASSPHRASE@": UUID().uuidString, "@USER@": root ? "www-data" : "#\(getuid())", "@GROUP@": root ? "www-data" : "#\(getgid())",
        ]
        var configuration = try String(contentsOf: source.appendingPathComponent("httpd.conf"), encoding: .utf8)
        for (placeholder, value) in values {
            configuration = configuration.replacingOccurrences(of: placeholder, with: value)
        }
        let configurationFile = folder.appendingPathComponent("httpd.conf")
        try configuration.write(to: configurationFile, atomically: true, encoding: .utf8)

        let process = try ServiceProcess.start(executable, arguments: ["-f", configurationFile.path, "-DFOREGROUND"], environment: [:])
        let apache = ApacheRelyingParty(url: "http://127.0.0.1:\(port)", folder: folder, process: process)
        do {
            try await EndToEndSystem.waitUntil(within: .seconds(20), "Apache with mod_auth_openidc answers") {
                guard process.isRunning else { throw ApacheFailed(log: apache.errorLog()) }
                let response = try? await http.execute(HTTPClientRequest(url: apache.url + "/signed-out.html"), timeout: .seconds(2))
                return response?.status == .ok
            }
        } catch {
            await apache.stop()
            throw error
        }
        return apache
    }

    struct ApacheFailed: Error, CustomStringConvertible {
        var log: String
        var description: String { "Apache stopped at its start:\n\(log)" }
    }

    /// Its error log and what it printed, for a failure's message.
    func errorLog() -> String {
        let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        return "apache's output:\n\(process.output.suffix(3_000))\napache's error.log:\n\(log.suffix(6_000))"
    }

    /// Stops it (SIGTERM: the parent ends its children) and waits for it.
    func stop() async {
        await process.stop()
    }
}
