import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

enum TestSupport {
    static let secret = WireSecret("test-secret-\(UInt64.random(in: 0 ... .max))")
    static let logger: Logger = {
        var logger = Logger(label: "konto.wire.tests")
        logger.logLevel = .critical
        return logger
    }()

    struct Echo: Codable, Sendable, Equatable {
        var text: String
        var number: Int
    }

    struct AppError: WireErrorConvertible {
        var wireErrorCode: KontoErrorCode { .credentialsTaken }
        var wireErrorMessage: String { "user id already taken" }
        var wireErrorDetails: [UInt8] { Array(#"{"fields":[{"key":"userId"}]}"#.utf8) }
    }

    static let echo = WireMethod<Echo, Echo>("test.echo")
    static let fail = WireMethod<Echo, Echo>("test.fail")

    /// Bounded wait: the body's result, or `WireError.timeout` after `seconds`.
    static func within<T: Sendable>(
        seconds: Double,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw WaitTimedOut()
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    struct WaitTimedOut: Error {}

    /// Returns once `condition` holds, checking it every few milliseconds; fails after `seconds`. For state only
    /// observable from outside (a server's event loops), not to wait out a race.
    static func waitUntil(seconds: Double = 30, _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await within(seconds: seconds) {
            while await !condition() {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    static func makeServer(
        port: Int = 0,
        configure: (inout WireServer.Configuration) -> Void = { _ in }
    ) -> WireServer {
        var configuration = WireServer.Configuration(port: port, serverName: "test-server", secret: secret)
        configure(&configuration)
        let server = WireServer(configuration: configuration, logger: logger)
        server.register(echo) { request, _ in request }
        server.register(fail) { _, _ in throw AppError() }
        server.registerRaw("test.raw") { payload, _ in payload }
        return server
    }

    /// A test server whose `test.gate` handler announces each call on `waiting`, then holds it until `release`
    /// yields, and answers with the payload: a way to keep calls provably in flight.
    static func makeGatedServer(
        configure: (inout WireServer.Configuration) -> Void = { _ in }
    ) -> (server: WireServer, waiting: AsyncStream<Void>, release: AsyncStream<Void>.Continuation) {
        let release = AsyncStream.makeStream(of: Void.self)
        let waiting = AsyncStream.makeStream(of: Void.self)
        let server = makeServer(configure: configure)
        server.registerRaw("test.gate") { payload, _ in
            waiting.continuation.yield()
            for await _ in release.stream { break }
            return payload
        }
        return (server, waiting.stream, release.continuation)
    }

    /// Runs `server` in a service group for the duration of `body`, then shuts it down gracefully.
    @discardableResult
    static func withRunning<T: Sendable>(
        _ services: [any Service],
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await RunningServices.with(services, logger: logger, body)
    }

    static func port(of server: WireServer) async throws -> Int {
        try await within(seconds: 30) { try await server.localAddress().port! }
    }

    static func makeClient(
        port: Int,
        configure: (inout WireClient.Configuration) -> Void = { _ in }
    ) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: "test-client", serverName: "test-server", secret: secret)
        configure(&configuration)
        return WireClient(configuration: configuration, logger: logger)
    }
}

/// A deliberately naive TCP peer for feeding a server arbitrary bytes and reading what comes back.
final class RawConnection: Sendable {
    let channel: any Channel
    private let inbox: Inbox

    /// Frames received so far and at most one reader waiting for the next.
    final class Inbox: Sendable {
        private struct State {
            var frames: [WireFrame] = []
            var finished = false
            var waiter: CheckedContinuation<WireFrame?, Never>?
        }
        private let state = Mutex(State())

        func deliver(_ frame: WireFrame?) {
            let waiter = self.state.withLock { state -> CheckedContinuation<WireFrame?, Never>? in
                if let waiter = state.waiter {
                    state.waiter = nil
                    if frame == nil { state.finished = true }
                    return waiter
                }
                if let frame { state.frames.append(frame) } else { state.finished = true }
                return nil
            }
            waiter?.resume(returning: frame)
        }

        func next() async -> WireFrame? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let immediate = self.state.withLock { state -> (WireFrame?, Bool) in
                        if !state.frames.isEmpty { return (state.frames.removeFirst(), true) }
                        if state.finished || Task.isCancelled { return (nil, true) }
                        state.waiter = continuation
                        return (nil, false)
                    }
                    if immediate.1 { continuation.resume(returning: immediate.0) }
                }
            } onCancel: {
                let waiter = self.state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(returning: nil)
            }
        }
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = WireFrame
        let inbox: Inbox
        init(_ inbox: Inbox) { self.inbox = inbox }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.inbox.deliver(Self.unwrapInboundIn(data))
        }
        func channelInactive(context: ChannelHandlerContext) {
            self.inbox.deliver(nil)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    static func connect(port: Int, autoRead: Bool = true) async throws -> RawConnection {
        let inbox = Inbox()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: autoRead)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WireFrameDecoder(maximumLength: 64 << 20)))
                    try channel.pipeline.syncOperations.addHandler(Collector(inbox))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, inbox: inbox)
    }

    private init(channel: any Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    func send(_ bytes: ByteBuffer) async throws {
        try await self.channel.writeAndFlush(bytes)
    }

    func send(_ frame: WireFrame) async throws {
        var buffer = ByteBuffer()
        WireFrameCodec.encode(frame, into: &buffer)
        try await self.send(buffer)
    }

    /// The next frame, or nil once the server closed the connection.
    func nextFrame(timeoutSeconds: Double = 30) async throws -> WireFrame? {
        try await TestSupport.within(seconds: timeoutSeconds) {
            await self.inbox.next()
        }
    }
    /// Every remaining frame until the server closes; fails if it does not close in time.
    func framesUntilClose(timeoutSeconds: Double = 30) async throws -> [WireFrame] {
        var frames: [WireFrame] = []
        while let frame = try await self.nextFrame(timeoutSeconds: timeoutSeconds) {
            frames.append(frame)
        }
        return frames
    }

    /// Reads the challenge and answers it; returns the server's welcome (or error) frame.
    func handshake(secret: WireSecret = TestSupport.secret, serviceName: String = "raw", serverName: String = "test-server", versions: [UInt8] = WireProtocolVersion.supported) async throws -> WireFrame? {
        guard let challengeFrame = try await self.nextFrame(),
              case .hello(.challenge(let challenge)) = challengeFrame.message
        else { return nil }
        let hello = WireHandshake.clientHello(answering: challenge, serviceName: serviceName, serverName: serverName, secret: secret, supportedVersions: versions)
        try await self.send(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
        return try await self.nextFrame()
    }

    func close() async {
        try? await self.channel.close()
    }

    /// Closes with SO_LINGER {1, 0}: the kernel sends a reset instead of a FIN and drops what either side left
    /// unread in this socket.
    func reset() async throws {
        guard let socket = self.channel as? any SocketOptionProvider else {
            Issue.record("not a socket channel")
            return
        }
        try await socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try await self.channel.close()
    }
}
