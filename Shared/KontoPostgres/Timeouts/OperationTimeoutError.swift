/// An operation ran past its time limit and was abandoned.
public struct OperationTimeoutError: Error, Sendable, Equatable, CustomStringConvertible {
    public let timeout: Duration

    public init(timeout: Duration) {
        self.timeout = timeout
    }

    public var description: String {
        "operation timed out after \(timeout)"
    }
}
