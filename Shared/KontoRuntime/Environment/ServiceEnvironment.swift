import Foundation
import Logging

/// Typed reads of a service's environment variables (twelve-factor configuration).
///
/// Every problem names the variable; values of variables marked secret never appear in errors
/// or logs.
public struct ServiceEnvironment: Sendable {
    private let variables: [String: String]

    public init(_ variables: [String: String] = ProcessInfo.processInfo.environment) {
        self.variables = variables
    }

    /// The value, or nil when unset or empty.
    public func string(_ name: String) -> String? {
        guard let value = variables[name], !value.isEmpty else { return nil }
        return value
    }

    public func string(_ name: String, default defaultValue: String) -> String {
        string(name) ?? defaultValue
    }

    public func required(_ name: String, purpose: String) throws(ServiceEnvironmentError) -> String {
        guard let value = string(name) else { throw ServiceEnvironmentError(variable: name, problem: "is required (\(purpose))") }
        return value
    }

    /// A secret of at least `minimumBytes` that looks random; errors never show the value.
    ///
    /// Refused: a placeholder (`.env.example`'s `replace-…`, a `change-me`), a value shorter than `minimumBytes`, and
    /// one of too few different characters (fewer than 10, or one character making up over a quarter of it), which
    /// no generator's output is (`openssl rand -hex 32` gives 64 characters of 16 kinds).
    public func secret(_ name: String, minimumBytes: Int = 32) throws(ServiceEnvironmentError) -> String {
        let value = try required(name, purpose: "a shared secret")
        let generate = "generate one with: openssl rand -hex 32"
        let lowercased = value.lowercased()
        if Self.placeholderMarks.contains(where: lowercased.contains) {
            throw ServiceEnvironmentError(variable: name, problem: "is a placeholder, not a secret (\(generate))")
        }
        guard value.utf8.count >= minimumBytes else {
            throw ServiceEnvironmentError(variable: name, problem: "must be at least \(minimumBytes) bytes long (\(generate))")
        }
        var counts: [UInt8: Int] = [:]
        for byte in value.utf8 { counts[byte, default: 0] += 1 }
        guard counts.count >= 10, let most = counts.values.max(), most * 4 <= value.utf8.count else {
            throw ServiceEnvironmentError(variable: name, problem: "does not look random: too few different characters (\(generate))")
        }
        return value
    }

    /// What the example files' placeholders contain.
    static let placeholderMarks = ["replace-with", "replace-me", "change-me", "changeme"]

    public func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(ServiceEnvironmentError) -> Int {
        guard let text = string(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw ServiceEnvironmentError(variable: name, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    public func port(_ name: String, default defaultValue: Int) throws(ServiceEnvironmentError) -> Int {
        try integer(name, default: defaultValue, in: 0...65535)
    }

    /// A duration in milliseconds.
    public func milliseconds(_ name: String, default defaultValue: Duration, in range: ClosedRange<Int> = 1...86_400_000) throws(ServiceEnvironmentError) -> Duration {
        guard string(name) != nil else { return defaultValue }
        return .milliseconds(try integer(name, default: 0, in: range))
    }

    /// `on`/`off` (also `true`/`false`, `1`/`0`).
    public func flag(_ name: String, default defaultValue: Bool) throws(ServiceEnvironmentError) -> Bool {
        guard let text = string(name) else { return defaultValue }
        switch text.lowercased() {
        case "on", "true", "1": return true
        case "off", "false", "0": return false
        default: throw ServiceEnvironmentError(variable: name, problem: "must be on or off, got \"\(text)\"")
        }
    }

    public func logLevel(_ name: String, default defaultValue: Logger.Level = .info) throws(ServiceEnvironmentError) -> Logger.Level {
        guard let text = string(name) else { return defaultValue }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ServiceEnvironmentError(variable: name, problem: "must be one of \(names), got \"\(text)\"")
        }
        return level
    }
}
