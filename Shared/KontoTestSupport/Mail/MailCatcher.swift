import Foundation

/// A real SMTP server for tests: PyPI's aiosmtpd running Tests/Mail/smtp_server.py as a process of its own, which
/// reads every mail it receives with Python's `email` package (the judge of Konto's MIME) and reports it.
/// scripts/test.sh installs aiosmtpd and names its Python in `KONTO_AIOSMTPD_PYTHON`.
public final class MailCatcher: Sendable {
    /// One mail as the server received it and Python's `email` package read it.
    public struct Mail: Decodable, Sendable {
        /// The envelope.
        public var from: String
        public var to: [String]
        public var tls: Bool
        public var authenticated: Bool
        /// The client's port: mails with the same one came over one connection.
        public var peerPort: Int?
        /// The client's address: which host's courier sent it.
        public var peer: String?
        /// The message as sent.
        public var data: String
        /// Decoded by Python: the subject, headers, and the text and HTML parts.
        public var subject: String
        public var messageId: String
        public var toHeader: String
        public var fromHeader: String
        public var text: String?
        public var html: String?
        /// The header names, lower-cased, in order.
        public var headers: [String]
        /// What Python found wrong with the message (its `defects`); empty for a correct one.
        public var defects: [String]

        /// The first `http(s)://` link in the text part that contains `path`.
        public func link(containing path: String) -> String? {
            (text ?? "").split(whereSeparator: { $0.isWhitespace }).map(String.init)
                .first { ($0.hasPrefix("http://") || $0.hasPrefix("https://")) && $0.contains(path) }
        }
    }

    public static var python: String? { ProcessInfo.processInfo.environment["KONTO_AIOSMTPD_PYTHON"] }

    public let port: Int
    private let process: ServiceProcess

    private init(port: Int, process: ServiceProcess) {
        self.port = port
        self.process = process
    }

    /// Starts the server in `mode` (see smtp_server.py: plain, starttls, reject-rcpt, later, flaky, hold) on a free port
    /// of `host` (loopback by default; a ``VirtualNetwork``'s bridge address for couriers on its hosts) and returns
    /// once it listens.
    public static func start(mode: String = "plain", certificate: (cert: String, key: String)? = nil, host: String = "127.0.0.1") async throws -> MailCatcher {
        let port = try FreePort.loopback()
        let (process, _) = try await ServiceProcess.startPythonJudge(
            "Mail/smtp_server.py", arguments: ["\(port)", mode] + (certificate.map { [$0.cert, $0.key] } ?? []),
            environment: ["SMTP_SERVER_HOST": host], pythonVariable: "KONTO_AIOSMTPD_PYTHON", tool: "aiosmtpd", readyPrefix: "ready"
        )
        return MailCatcher(port: port, process: process)
    }

    private var lines: [Substring] { process.output.split(separator: "\n") }

    /// Every mail received so far, in order.
    public var mails: [Mail] {
        lines.filter { $0.hasPrefix("{") }.compactMap { try? JSONDecoder().decode(Mail.self, from: Data($0.utf8)) }
    }

    /// The Message-IDs of the mails a `hold` server is holding (their first delivery, never answered).
    public var held: [String] {
        lines.filter { $0.hasPrefix("held ") }.map { String($0.dropFirst(5)) }
    }

    /// The mails once at least `count` have arrived; those there are after `bound` otherwise.
    public func waitForMails(_ count: Int, within bound: Duration = .seconds(30)) async -> [Mail] {
        await poll(within: bound, until: { $0.count >= count }) { $0.mails }
    }

    /// The held Message-IDs once at least `count` are held; those there are after `bound` otherwise.
    public func waitForHeld(_ count: Int, within bound: Duration = .seconds(30)) async -> [String] {
        await poll(within: bound, until: { $0.count >= count }) { $0.held }
    }

    /// Reads `value` until `done` holds or `bound` passes. The server is another process that writes its log: this
    /// polls that file, as a reader of a log would.
    private func poll<Value>(within bound: Duration, until done: (Value) -> Bool, _ value: (MailCatcher) -> Value) async -> Value {
        let deadline = ContinuousClock.now + bound
        while true {
            let current = value(self)
            if done(current) || ContinuousClock.now >= deadline { return current }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the server.
    public func stop() async {
        await process.stop(grace: .seconds(5))
    }
}
