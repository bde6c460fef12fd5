import Foundation
import KontoRuntime
import Logging
import Testing

@Suite("Service environment")
struct ServiceEnvironmentTests {
    @Test("defaults apply to unset and empty variables")
    func defaults() throws {
        let environment = ServiceEnvironment(["EMPTY": ""])
        #expect(environment.string("EMPTY") == nil)
        #expect(environment.string("UNSET", default: "d") == "d")
        #expect(try environment.port("UNSET", default: 7402) == 7402)
        #expect(try environment.logLevel("UNSET") == .info)
        #expect(try environment.milliseconds("UNSET", default: .seconds(2)) == .seconds(2))
    }

    @Test("typed values are read")
    func typed() throws {
        let environment = ServiceEnvironment(["PORT": "8080", "LEVEL": "DEBUG", "TIMEOUT": "250"])
        #expect(try environment.port("PORT", default: 1) == 8080)
        #expect(try environment.logLevel("LEVEL") == .debug)
        #expect(try environment.milliseconds("TIMEOUT", default: .seconds(1)) == .milliseconds(250))
    }

    @Test("bad values name the variable and the problem", arguments: [
        ("PORT", "http", "PORT must be a whole number from 0 to 65535, got \"http\""),
        ("PORT", "70000", "PORT must be a whole number from 0 to 65535, got \"70000\""),
        ("LEVEL", "loud", "LEVEL must be one of trace, debug, info, notice, warning, error, critical, got \"loud\""),
    ])
    func badValues(name: String, value: String, message: String) {
        let environment = ServiceEnvironment([name: value])
        let error = #expect(throws: ServiceEnvironmentError.self) {
            switch name {
            case "PORT": _ = try environment.port(name, default: 1)
            default: _ = try environment.logLevel(name)
            }
        }
        #expect(error?.description == message)
    }

    @Test("a missing or short secret is refused without showing it")
    func secrets() {
        let missing = #expect(throws: ServiceEnvironmentError.self) {
            _ = try ServiceEnvironment([:]).secret("KONTO_WIRE_SECRET")
        }
        #expect(missing?.description == "KONTO_WIRE_SECRET is required (a shared secret)")
        let short = #expect(throws: ServiceEnvironmentError.self) {
            _ = try ServiceEnvironment(["KONTO_WIRE_SECRET": "tiny-s3cret"]).secret("KONTO_WIRE_SECRET")
        }
        #expect(short?.description == "KONTO_WIRE_SECRET must be at least 32 bytes long (generate one with: openssl rand -hex 32)")
        #expect(short?.description.contains("tiny-s3cret") == false)
    }

    @Test("placeholders and secrets that do not look random are refused, saying why; generated ones pass", arguments: [
        ("replace-with-a-long-random-secret", "is a placeholder"),
        ("CHANGE-ME-to-something-long-enough-please", "is a placeholder"),
        (String(repeating: "a", count: 40), "does not look random"),
        (String(repeating: "0123", count: 10), "does not look random"),
        (String(repeating: "ab", count: 8) + String(repeating: "a", count: 24), "does not look random"),
    ])
    func weakSecrets(value: String, problem: String) {
        let error = #expect(throws: ServiceEnvironmentError.self) {
            _ = try ServiceEnvironment(["KONTO_WIRE_SECRET": value]).secret("KONTO_WIRE_SECRET")
        }
        #expect(error?.description.contains(problem) == true, "\(String(describing: error))")
        #expect(error?.description.contains(value) == false)
    }

    @Test("a generated secret passes")
    func generatedSecret() throws {
        let hex = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0 ... .max)) }.joined()
        #expect(try ServiceEnvironment(["KONTO_WIRE_SECRET": hex]).secret("KONTO_WIRE_SECRET") == hex)
        let words = "process-stack-" + UUID().uuidString
        #expect(try ServiceEnvironment(["KONTO_WIRE_SECRET": words]).secret("KONTO_WIRE_SECRET") == words)
    }

    @Test("a required variable that is missing is named")
    func required() {
        let error = #expect(throws: ServiceEnvironmentError.self) {
            _ = try ServiceEnvironment([:]).required("KONTO_PROFILE_DATABASE_URL", purpose: "the PostgreSQL database")
        }
        #expect(error?.variable == "KONTO_PROFILE_DATABASE_URL")
    }
}
