/// An error from the test kit, with a stable code and a message that never carries a password.
public struct KontoTestingError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { rawValue }

        public static let binariesNotFound = Code(rawValue: "testing.postgresBinariesNotFound")
        public static let commandFailed = Code(rawValue: "testing.commandFailed")
        public static let invalidDatabaseURL = Code(rawValue: "testing.invalidDatabaseURL")
        public static let clusterNotRunning = Code(rawValue: "testing.clusterNotRunning")
        public static let toolNotInstalled = Code(rawValue: "testing.toolNotInstalled")
        public static let serverDidNotStart = Code(rawValue: "testing.serverDidNotStart")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
