import Foundation
import KontoModel

/// A sign-up request that the configured schema accepts, for the stack's banner: the userId and password, and a
/// plausible value for every required detail by its key and type. Made from the schema the stack runs with, so the
/// example works whatever keys a deployment requires.
public enum SignUpExample {
    /// The request body as compact JSON with sorted keys; nil when the values made up for the required keys break a
    /// rule of the schema (a custom key's pattern), where no example can be guessed.
    public static func json(for accounts: AccountConfiguration) -> String? {
        var details: [String: AccountValue] = [:]
        for identifier in accounts.requiredIdentifiers where ![UserIdKey.identifier, PasswordKey.identifier].contains(identifier) {
            guard let descriptor = accounts.schema[identifier] else { return nil }
            details[identifier] = value(for: descriptor)
        }
        // Charles, not README's Ada: the banner's example and README's quick start both run on one fresh stack, and
        // the second to sign up the same account would be refused.
        let userId = accounts.userIdType == .emailAddress ? "charles@example.org" : "charles"
        var all = details
        all[UserIdKey.identifier] = .string(userId)
        guard accounts.valueErrors(in: all).isEmpty else { return nil }
        let body: [String: AccountValue] = [
            "userId": .string(userId),
            "password": .string("correct horse battery"),
            "details": .object(details),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(body)).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// A value of the key's type; the built-in keys get Charles Babbage's.
    static func value(for descriptor: AccountKeyDescriptor) -> AccountValue {
        switch descriptor.identifier {
        case NameKey.identifier: return .object(["givenName": .string("Charles"), "familyName": .string("Babbage")])
        case DateOfBirthKey.identifier: return .string("1791-12-26")
        case GenderIdentityKey.identifier: return .string("male")
        case EmailKey.identifier: return .string("charles@example.org")
        case PhoneNumbersKey.identifier: return .array([.string("+442071234567")])
        default: break
        }
        switch descriptor.valueType {
        case .string: return .string("example")
        case .bool: return .bool(true)
        case .integer: return .integer(1)
        case .double: return .double(1)
        case .date: return .string("2000-01-01")
        case let .enumeration(cases): return cases.first.map(AccountValue.string) ?? .null
        case .stringList: return .array([.string("example")])
        case .personName: return .object(["givenName": .string("Ada"), "familyName": .string("Lovelace")])
        }
    }
}
