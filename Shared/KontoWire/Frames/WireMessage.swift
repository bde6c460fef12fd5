/// A decoded frame body, one case per kind, each with its own payload type.
public enum WireMessage: Sendable, Hashable {
    case hello(WireHello)
    case welcome(WireWelcome)
    case request(WireRequest)
    case response(WireResponse)
    case error(WireErrorBody)
    case event(WireEvent)
    case ack(WireAck)
    case ping(WirePing)
    case pong(WirePong)
    case goaway(WireGoAway)

    public var kind: WireMessageKind {
        switch self {
        case .hello: .hello
        case .welcome: .welcome
        case .request: .request
        case .response: .response
        case .error: .error
        case .event: .event
        case .ack: .ack
        case .ping: .ping
        case .pong: .pong
        case .goaway: .goaway
        }
    }
}
