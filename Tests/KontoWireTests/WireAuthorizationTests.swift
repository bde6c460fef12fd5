import KontoWire
import NIOCore
import Synchronization
import Testing

@Suite("Wire authorization")
struct WireAuthorizationTests {
    static let secret = WireSecret("authorization-secret")
    static let nonce = [UInt8](repeating: 3, count: 32)
    static let authorization = WireAuthorization([
        "*": ["health"],
        "gateway": ["read", "write"],
        "operator-*": ["read", "watch"],
    ])

    /// A server connection past its handshake with `peer`, serving methods under ``authorization``.
    static func server(peer: String) -> ServerConnectionStateMachine {
        var machine = ServerConnectionStateMachine(configuration: .init(
            serverName: "s",
            methods: ["health", "read", "write", "watch", "admin"],
            secret: secret,
            maxInFlight: 4,
            subscriptionMethods: ["watch"],
            authorization: authorization
        ))
        _ = machine.channelActive(nonce: nonce)
        let hello = WireHandshake.clientHello(answering: .init(nonce: nonce), serviceName: peer, serverName: "s", secret: secret)
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
        guard case .write(let frame) = action, case .welcome = frame.message else {
            Issue.record("handshake did not complete: \(action)")
            return machine
        }
        return machine
    }

    static func request(_ id: UInt64, _ method: String, credit: UInt32? = nil) -> WireFrame {
        WireFrame(correlationID: id, message: .request(.init(method: method, credit: credit, payload: ByteBuffer())))
    }

    static func forbidden(_ id: UInt64, peer: String, method: String) -> ServerConnectionStateMachine.Action {
        .write(WireFrame(correlationID: id, message: .error(.init(WireError.forbidden(peer: peer, method: method)))))
    }

    @Test("a peer calls what its rule names and is answered wire.forbidden for the rest, without taking a slot")
    func namedPeer() {
        var machine = Self.server(peer: "gateway")
        #expect(machine.frameReceived(Self.request(1, "read")) == .forward(correlationID: 1, request: .init(method: "read", payload: ByteBuffer())))
        #expect(machine.frameReceived(Self.request(2, "health")) == .forward(correlationID: 2, request: .init(method: "health", payload: ByteBuffer())))
        #expect(machine.frameReceived(Self.request(3, "admin")) == Self.forbidden(3, peer: "gateway", method: "admin"))
        #expect(machine.frameReceived(Self.request(4, "watch", credit: 1)) == Self.forbidden(4, peer: "gateway", method: "watch"))
        #expect(machine.inFlightCount == 2)
        #expect(machine.subscriptionCount == 0)
        // The connection stays usable after a refusal.
        #expect(machine.frameReceived(Self.request(5, "write")) == .forward(correlationID: 5, request: .init(method: "write", payload: ByteBuffer())))
    }

    @Test("a family rule covers its members, a subscription included, and not the bare prefix")
    func family() {
        var member = Self.server(peer: "operator-billing")
        #expect(member.frameReceived(Self.request(1, "watch", credit: 2)) == .subscribe(correlationID: 1, request: .init(method: "watch", credit: 2, payload: ByteBuffer()), credit: 2))
        #expect(member.frameReceived(Self.request(2, "write")) == Self.forbidden(2, peer: "operator-billing", method: "write"))
        var bare = Self.server(peer: "operator-")
        #expect(bare.frameReceived(Self.request(1, "read")) == Self.forbidden(1, peer: "operator-", method: "read"))
        #expect(bare.frameReceived(Self.request(2, "health")) == .forward(correlationID: 2, request: .init(method: "health", payload: ByteBuffer())))
    }

    @Test("a peer no rule names gets only what every caller gets; an unknown method stays wire.unknownMethod")
    func stranger() {
        var machine = Self.server(peer: "intruder")
        #expect(machine.frameReceived(Self.request(1, "read")) == Self.forbidden(1, peer: "intruder", method: "read"))
        #expect(machine.frameReceived(Self.request(2, "health")) == .forward(correlationID: 2, request: .init(method: "health", payload: ByteBuffer())))
        #expect(machine.frameReceived(Self.request(3, "nothing")) == .write(WireFrame(correlationID: 3, message: .error(.init(WireError.unknownMethod("nothing"))))))
    }

    @Test("matching: exact names, families, everyone; no rule allows nothing")
    func matching() {
        #expect(Self.authorization.allows(peer: "gateway", method: "write"))
        #expect(!Self.authorization.allows(peer: "gateway2", method: "write"))
        #expect(!Self.authorization.allows(peer: "Gateway", method: "write"))
        #expect(Self.authorization.allows(peer: "operator-x", method: "watch"))
        #expect(!Self.authorization.allows(peer: "x-operator-x", method: "watch"))
        #expect(Self.authorization.allows(peer: "", method: "health"))
        #expect(!WireAuthorization([:]).allows(peer: "gateway", method: "health"))
        #expect(WireAuthorization.allowingEveryone.allows(peer: "anyone", method: "anything"))
        #expect(Self.authorization.permittedMethods(for: "operator-a", among: ["read", "write", "health"]) == ["read", "health"])
    }

    @Test("over real sockets a forbidden call is answered wire.forbidden, its handler never runs, and the connection stays usable")
    func overSockets() async throws {
        let calls = Atomic<Int>(0)
        let server = TestSupport.makeServer { configuration in
            configuration.authorization = WireAuthorization(["allowed": ["test.raw", "test.counted"]])
        }
        server.registerRaw("test.counted") { payload, _ in
            calls.add(1, ordering: .relaxed)
            return payload
        }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let allowed = TestSupport.makeClient(port: port) { $0.serviceName = "allowed" }
            let other = TestSupport.makeClient(port: port) { $0.serviceName = "other" }
            try await TestSupport.withRunning([allowed, other]) {
                await #expect {
                    _ = try await other.callRaw("test.counted", payload: ByteBuffer(string: "hi"))
                } throws: { ($0 as? WireError)?.code == WireError.Code.forbidden && ($0 as? WireError)?.isRetryable == false }
                #expect(calls.load(ordering: .relaxed) == 0)
                let answer = try await allowed.callRaw("test.counted", payload: ByteBuffer(string: "hi"))
                #expect(String(buffer: answer) == "hi")
                #expect(calls.load(ordering: .relaxed) == 1)
                await #expect {
                    _ = try await other.call(TestSupport.echo, .init(text: "no", number: 1))
                } throws: { ($0 as? WireError)?.code == WireError.Code.forbidden }
            }
        }
    }
}
