import KontoWire
import NIOCore
import NIOPosix
import Testing

/// Mutual authentication over real sockets (issue 28, item 5): a server that does not know the caller's key, or
/// one that relays another server's handshake, is refused by the client.
@Suite("Wire: mutual authentication")
struct MutualAuthenticationTests {
    /// A server that speaks the handshake's frames: it challenges, and answers any hello with `welcome(hello)`.
    final class FakeServerHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = WireFrame
        typealias OutboundOut = ByteBuffer
        let welcome: @Sendable (WireHello.Challenge, WireHello.ClientHello) -> WireWelcome
        let challenge = WireHello.Challenge(nonce: WireHandshake.makeNonce())

        init(welcome: @escaping @Sendable (WireHello.Challenge, WireHello.ClientHello) -> WireWelcome) {
            self.welcome = welcome
        }

        func channelActive(context: ChannelHandlerContext) {
            self.write(WireFrame(correlationID: 0, message: .hello(.challenge(self.challenge))), context: context)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .hello(.clientHello(let hello)) = Self.unwrapInboundIn(data).message else { return }
            self.write(WireFrame(correlationID: 0, message: .welcome(self.welcome(self.challenge, hello))), context: context)
        }

        private func write(_ frame: WireFrame, context: ChannelHandlerContext) {
            var buffer = context.channel.allocator.buffer(capacity: 256)
            WireFrameCodec.encode(frame, into: &buffer)
            context.writeAndFlush(Self.wrapOutboundOut(buffer), promise: nil)
        }
    }

    static func withFakeServer(
        welcome: @escaping @Sendable (WireHello.Challenge, WireHello.ClientHello) -> WireWelcome,
        _ body: (Int) async throws -> Void
    ) async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WireFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(FakeServerHandler(welcome: welcome))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        do {
            try await body(channel.localAddress!.port!)
        } catch {
            try? await channel.close()
            throw error
        }
        try await channel.close()
    }

    /// One connection, calling as `name`.
    static func client(port: Int, name: String = "identity", server: String = "echo", secret: WireSecret = TestSupport.secret) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: name, serverName: server, secret: secret)
        configuration.connectionCount = 1
        return WireClient(configuration: configuration, logger: TestSupport.logger)
    }

    static func expectRefused(port: Int, secret: WireSecret = TestSupport.secret) async throws {
        let client = Self.client(port: port, secret: secret)
        try await TestSupport.withRunning([client]) {
            await #expect {
                _ = try await client.call(TestSupport.echo, .init(text: "", number: 0), timeout: .seconds(20))
            } throws: { ($0 as? WireError)?.code == WireError.Code.serverAuthenticationFailed }
        }
    }

    @Test("a server without the secret cannot complete a handshake: its welcome proves nothing")
    func fakeServer() async throws {
        try await Self.withFakeServer(welcome: { _, _ in
            WireWelcome(version: WireProtocolVersion.current, serverName: "echo", methods: ["echo"], maxInFlight: 8, maxFrameLength: 1 << 20, mac: WireHandshake.makeNonce())
        }) { port in
            try await Self.expectRefused(port: port)
        }
    }

    @Test("a relay that passes a real server's welcome from another handshake is refused")
    func relayedWelcome() async throws {
        // The relay knows a welcome the real server gave in another handshake (another client nonce): it has the
        // real server's proof, but not for this client's nonce.
        let secret = TestSupport.secret
        try await Self.withFakeServer(welcome: { challenge, hello in
            let recorded = WireHandshake.Transcript(
                serverNonce: challenge.nonce, serverVersions: challenge.supportedVersions, serviceName: hello.serviceName,
                clientVersions: hello.supportedVersions, clientNonce: WireHandshake.makeNonce()
            )
            let version = WireProtocolVersion.current
            let mac = WireHandshake.serverProof(key: secret.proofKey(caller: hello.serviceName, server: "echo"), transcript: recorded, version: version, serverName: "echo")
            return WireWelcome(version: version, serverName: "echo", methods: ["echo"], maxInFlight: 8, maxFrameLength: 1 << 20, mac: mac)
        }) { port in
            try await Self.expectRefused(port: port, secret: secret)
        }
    }

    @Test("with the right proof the same fake server is accepted: the test can tell the difference")
    func honestWelcomeAccepted() async throws {
        let secret = TestSupport.secret
        try await Self.withFakeServer(welcome: { challenge, hello in
            let transcript = WireHandshake.Transcript(
                serverNonce: challenge.nonce, serverVersions: challenge.supportedVersions, serviceName: hello.serviceName,
                clientVersions: hello.supportedVersions, clientNonce: hello.nonce
            )
            let version = WireProtocolVersion.current
            let mac = WireHandshake.serverProof(key: secret.proofKey(caller: hello.serviceName, server: "echo"), transcript: transcript, version: version, serverName: "echo")
            return WireWelcome(version: version, serverName: "echo", methods: ["echo"], maxInFlight: 8, maxFrameLength: 1 << 20, mac: mac)
        }) { port in
            let client = Self.client(port: port, secret: secret)
            try await TestSupport.withRunning([client]) {
                // Welcomed: the request goes out and, unanswered by the fake, times out (not a handshake error).
                await #expect {
                    _ = try await client.call(TestSupport.echo, .init(text: "", number: 0), timeout: .milliseconds(500))
                } throws: { ($0 as? WireError)?.code == WireError.Code.timeout }
            }
        }
    }

    @Test("a process given only its own peer key calls as itself, and cannot call as another service")
    func peerKeyOnly() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let gatewayKey = WireSecret(peerKey: TestSupport.secret.peerKeyBytes(for: "gateway"), for: "gateway")
            for (name, works) in [("gateway", true), ("identity", false)] {
                let client = Self.client(port: port, name: name, server: "test-server", secret: gatewayKey)
                try await TestSupport.withRunning([client]) {
                    if works {
                        _ = try await client.call(TestSupport.echo, .init(text: "hi", number: 1), timeout: .seconds(20))
                    } else {
                        await #expect {
                            _ = try await client.call(TestSupport.echo, .init(text: "", number: 0), timeout: .seconds(20))
                        } throws: { ($0 as? WireError)?.code == WireError.Code.authenticationFailed }
                    }
                }
            }
        }
    }
}
