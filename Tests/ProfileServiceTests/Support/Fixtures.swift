import KontoContracts
import KontoModel
import Logging
import ProfileService

enum Fixtures {
    static let logger: Logger = {
        var logger = Logger(label: "test.profile")
        logger.logLevel = .critical
        return logger
    }()

    /// Generous timeouts: a loaded two-core machine must not turn a slow answer into a failure.
    static let options = ProfileStoreOptions(operationTimeout: .seconds(20))

    /// Details that satisfy ``AccountConfigurationChoice/standard`` (no credentials: Identity holds them).
    static func details(userId: String = "ada@example.org") -> AccountDetails {
        var details = AccountDetails()
        details[\.userId] = userId
        details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
        details[\.email] = "ada@work.example"
        details[identifier: "biography"] = .string("wrote the first program.")
        return details
    }

    static func modifications(set values: [String: AccountValue] = [:], remove: Set<String> = []) -> AccountModifications {
        AccountModifications(set: AccountDetails(values: values), remove: remove)
    }

    static func accountId() -> String {
        "acct-" + String(UInt64.random(in: .min ... .max), radix: 36)
    }
}

extension Fixtures {
    /// The field codes of an error, as strings: cheap for the type checker, readable in a failure.
    static func codes(_ error: ServiceError?) -> [String]? {
        error?.fields.map(\.code.rawValue)
    }
}
