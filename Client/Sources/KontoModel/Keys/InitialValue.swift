/// The value a signup form starts with, as in SpeziAccount.
public enum InitialValue<Value: Sendable & Equatable & Encodable>: Sendable, Equatable {
    /// A placeholder the user must replace when the key is required (e.g. `""`).
    case empty(Value)
    /// A real value that may be kept as is (e.g. `false` for a toggle).
    case `default`(Value)
    /// No sensible starting value (e.g. a date of birth).
    case none

    /// The stored form, `nil` for ``none``.
    public var accountValue: AccountValue? {
        switch self {
        case let .empty(value), let .default(value): try? AccountValue(encoding: value)
        case .none: nil
        }
    }
}
