/// The kind byte of a frame. Values are frozen by the golden-frame tests.
public enum WireMessageKind: UInt8, Sendable, Hashable, CaseIterable {
    case hello = 1
    case welcome = 2
    case request = 3
    case response = 4
    case error = 5
    case event = 6
    case ack = 7
    case ping = 8
    case pong = 9
    case goaway = 10
}
