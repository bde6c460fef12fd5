import Logging
import Synchronization
import Tracing
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// Serves registered methods over the wire protocol.
///
/// Register every method, then `run()` it (typically in a ServiceGroup). On graceful shutdown it
/// stops accepting, sends goaway on every connection, lets accepted requests finish (up to
/// ``Configuration/shutdownGracePeriod``), closes, and returns.
public final class WireServer: Service, Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port; see ``WireServer/localAddress()``.
        public var port: Int
        public var serverName: String
        /// Whom this server accepts: each caller's verifier (``WireVerifiers``).
        public var verifiers: WireVerifiers
        public var maxFrameLength: Int = WireFrame.defaultMaximumLength
        public var maxInFlightPerConnection: Int = 128
        /// Subscriptions one connection may have open; one more is refused `wire.overloaded` (retryable).
        public var maxSubscriptionsPerConnection: Int = WireLimits.defaultMaximumSubscriptions
        /// The most events a subscription may have unacknowledged, whatever credit its client asks for.
        public var maxCreditPerSubscription: Int = WireLimits.defaultMaximumCredit
        /// Connections served at once; one more is answered `wire.overloaded` (retryable) and closed, so a
        /// flood of connections cannot exhaust memory or file descriptors. A closed connection counts until the
        /// handlers it started have returned.
        public var maxConnections: Int = 1_024
        /// A connection that sends nothing for this long is closed (clients heartbeat well within it).
        public var idleTimeout: TimeAmount = .seconds(60)
        public var shutdownGracePeriod: TimeAmount = .seconds(10)
        /// Which calling service may call which method (a call outside it is answered `wire.forbidden`). Konto's
        /// services set theirs from KontoContracts' `WireAllowList`; the default admits every authenticated peer.
        public var authorization: WireAuthorization = .allowingEveryone
        /// Set to serve TLS; the handshake still authenticates the peer with the shared secret.
        public var tlsContext: NIOSSLContext?
        /// Where method handlers run unless registered with their own; the default is safe for any handler.
        public var handlerExecution: HandlerExecution = .globalExecutor
        /// A connection whose unwritten answers exceed `high` bytes (a peer that stopped reading) is not read
        /// from until they drop below `low`; its requests already accepted still finish. This, with the in-flight
        /// limit, bounds what one connection can make the server hold.
        public var writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 64 * 1024, high: 256 * 1024)

        public init(host: String = "127.0.0.1", port: Int, serverName: String, verifiers: WireVerifiers) {
            self.host = host
            self.port = port
            self.serverName = serverName
            self.verifiers = verifiers
        }

        /// Accepting every caller whose verifier `secret` derives (the root: any caller; development and tests).
        public init(host: String = "127.0.0.1", port: Int, serverName: String, secret: WireSecret) {
            self.init(host: host, port: port, serverName: serverName, verifiers: WireVerifiers(secret))
        }
    }

    public typealias RawHandler = @Sendable (ByteBuffer, WireRequestContext) async throws -> ByteBuffer
    /// Serves one subscription for as long as it runs: returning (or throwing) ends it with a response (or error)
    /// frame; it is cancelled when the client cancels, the connection closes or the server shuts down.
    public typealias RawSubscriptionHandler = @Sendable (ByteBuffer, WireRequestContext, WireSubscription) async throws -> Void

    public enum HandlerExecution: Sendable {
        /// Handlers run on Swift's global concurrent executor.
        case globalExecutor
        /// Handlers run on their connection's event loop thread, saving two thread hops per
        /// request; each starts at once, inside the read that brought its request, and only
        /// awaits go through the loop's queue. Only for handlers that never block and never compute
        /// for long (they would stall every connection on that loop) — e.g. not password hashing.
        case eventLoop
    }

    /// A registered method: its handler and, when it chose one, where it runs.
    struct Registration: Sendable {
        var handler: RawHandler
        var execution: HandlerExecution?
        /// Set for a method that opens a subscription (and then `handler` is never called).
        var subscription: RawSubscriptionHandler?
    }

    private struct State {
        var handlers: [String: Registration] = [:]
        var isRunning = false
        var isShuttingDown = false
        var connections: [ObjectIdentifier: any Channel] = [:]
        /// Accepted connections counted against the limit, from the moment their pipeline is set up until they are
        /// closed and every handler they started has returned.
        var admitted = 0
    }

    private let configuration: Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())
    private let boundAddress: EventLoopPromise<SocketAddress>

    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.boundAddress = eventLoopGroup.any().makePromise()
    }

    deinit {
        // A server dropped without having listened (its process stopped while waiting for a dependency) must not
        // leave the promise unfulfilled: NIO's debug builds trap on that. Completing it again is a no-op.
        self.boundAddress.fail(WireError.serviceUnavailable("the wire server stopped before it listened"))
    }

    /// Registers a typed method with JSON payloads. Register before `run()`.
    ///
    /// - Parameter execution: where this method's handler runs; `nil` takes ``Configuration/handlerExecution``.
    ///   A server may keep quick lookups on the event loop and send decoding, validation or hashing elsewhere.
    public func register<Request, Response>(
        _ method: WireMethod<Request, Response>,
        execution: HandlerExecution? = nil,
        handler: @escaping @Sendable (Request, WireRequestContext) async throws -> Response
    ) {
        self.registerRaw(method.name, execution: execution) { payload, context in
            let request = try WirePayloadCodec.decode(Request.self, from: payload, userInfo: method.codingUserInfo)
            return try WirePayloadCodec.encode(try await handler(request, context))
        }
    }

    /// Registers a method that works on the raw payload bytes. Register before `run()`.
    public func registerRaw(_ method: String, execution: HandlerExecution? = nil, handler: @escaping RawHandler) {
        self.state.withLock { state in
            // Connections list the methods when they open; a later one would never be served.
            precondition(!state.isRunning, "register wire methods before running the server")
            state.handlers[method] = Registration(handler: handler, execution: execution)
        }
    }

    /// Registers a method that opens a subscription (docs/PROTOCOL.md, "Subscriptions"). Register before `run()`.
    /// The handler runs on the global executor for as long as the subscription lasts.
    public func registerSubscription<Request, Event>(
        _ method: WireSubscriptionMethod<Request, Event>,
        handler: @escaping @Sendable (Request, WireRequestContext, WireSubscriber<Event>) async throws -> Void
    ) {
        self.registerRawSubscription(method.name) { payload, context, subscription in
            let request = try WirePayloadCodec.decode(Request.self, from: payload, userInfo: [:])
            try await handler(request, context, WireSubscriber(subscription: subscription))
        }
    }

    /// Registers a subscription method that works on raw payload bytes. Register before `run()`.
    public func registerRawSubscription(_ method: String, handler: @escaping RawSubscriptionHandler) {
        self.state.withLock { state in
            precondition(!state.isRunning, "register wire methods before running the server")
            state.handlers[method] = Registration(
                handler: { _, _ in throw WireError.protocolViolation("\(method) opens a subscription") },
                execution: .globalExecutor,
                subscription: handler
            )
        }
    }

    /// The address the server listens on, once it does.
    public func localAddress() async throws -> SocketAddress {
        try await self.boundAddress.futureResult.get()
    }

    public func run() async throws {
        // Whoever waits for the address learns that it never comes (a no-op once it has).
        defer { self.boundAddress.fail(WireError.serviceUnavailable("the wire server stopped before it listened")) }
        let handlers = self.state.withLock { state in
            state.isRunning = true
            return state.handlers
        }
        let connectionConfiguration = ServerConnectionStateMachine.Configuration(
            serverName: self.configuration.serverName,
            methods: handlers.keys.sorted(),
            verifiers: self.configuration.verifiers,
            maxInFlight: self.configuration.maxInFlightPerConnection,
            maxFrameLength: self.configuration.maxFrameLength,
            subscriptionMethods: Set(handlers.filter { $0.value.subscription != nil }.keys),
            maxSubscriptions: self.configuration.maxSubscriptionsPerConnection,
            maxCredit: self.configuration.maxCreditPerSubscription,
            authorization: self.configuration.authorization
        )
        let dispatch = ServerConnectionHandler.Dispatch(
            handlers: handlers,
            defaultExecution: self.configuration.handlerExecution,
            maxFrameLength: self.configuration.maxFrameLength
        )
        let configuration = self.configuration
        let logger = self.logger

        // Connections come out of the async sequence fully set up; their requests are answered by
        // ServerConnectionHandler, so the per-connection task only owns the connection's lifetime.
        let serverChannel: NIOAsyncChannel<any Channel, Never>
        do {
            serverChannel = try await ServerBootstrap(group: self.eventLoopGroup)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelOption(.writeBufferWaterMark, value: configuration.writeBufferWaterMark)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    return channel.eventLoop.makeCompletedFuture {
                        // Made first, so that the close is seen (and the count dropped) whatever fails below.
                        let connection = self.admit(channel, limit: configuration.maxConnections) { admitted, settled in
                            ServerConnectionHandler(
                                configuration: connectionConfiguration,
                                dispatch: dispatch,
                                admitted: admitted,
                                logger: logger,
                                settled: settled
                            )
                        }
                        let sync = channel.pipeline.syncOperations
                        if let tls = configuration.tlsContext {
                            try sync.addHandler(NIOSSLServerHandler(context: tls))
                        }
                        try sync.addHandler(ByteToMessageHandler(WireFrameDecoder(
                            maximumLength: configuration.maxFrameLength,
                            firstFrameMaximumLength: WireLimits.maximumHandshakeFrameLength
                        )))
                        try sync.addHandler(MessageToByteHandler(WireFrameEncoder()))
                        try sync.addHandler(IdleStateHandler(readTimeout: configuration.idleTimeout))
                        try sync.addHandler(connection)
                        return channel
                    }
                }
        } catch {
            let error = ListenError(server: configuration.serverName, host: configuration.host, port: configuration.port, error: error)
            self.boundAddress.fail(error)
            throw error
        }
        if let address = serverChannel.channel.localAddress {
            self.boundAddress.succeed(address)
        }
        logger.info("Wire server listening", metadata: ["konto.address": "\(serverChannel.channel.localAddress.map { "\($0)" } ?? "?")"])

        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                do {
                    try await serverChannel.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask {
                                await self.serve(connection)
                            }
                        }
                    }
                } catch {
                    logger.debug("Wire server stopped accepting", metadata: ["konto.error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            self.beginShutdown(serverChannel: serverChannel.channel)
        }
        logger.info("Wire server stopped")
    }

    /// What one connection holds at a moment: `package` for tests showing that a peer cannot make the server
    /// buffer without bound.
    package struct ConnectionLoad: Sendable {
        /// Request frames read on the connection so far.
        package var requestsReceived: Int
        package var inFlight: Int
        /// The connection is not being read (in-flight limit reached, or answers not drained).
        package var isReadHeld: Bool
        package var isWritable: Bool
        /// Bytes written to the channel that the kernel has not taken yet.
        package var bufferedOutboundBytes: Int
    }

    /// Connections counted against the connection limit: open ones, and closed ones whose handlers have not all
    /// returned yet (what a peer that left still makes the server hold).
    package var admittedConnections: Int {
        self.state.withLock { $0.admitted }
    }

    /// The load of each open connection (those that have reached `serve`).
    package func connectionLoads() async -> [ConnectionLoad] {
        let channels = self.state.withLock { Array($0.connections.values) }
        var loads: [ConnectionLoad] = []
        for channel in channels {
            let load = try? await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.handler(type: ServerConnectionHandler.self).load(channel: channel)
            }.get()
            if let load { loads.append(load) }
        }
        return loads
    }

    /// Counts a new connection in, unless `limit` connections are counted already, and makes its handler (on the
    /// channel's event loop) with whether it was admitted and what to call once it has settled.
    ///
    /// The count drops once the connection is closed *and* its handlers have returned, not at the close alone: a
    /// handler that ignores cancellation still holds memory for a peer that left, and a peer that leaves and comes
    /// back must not pile such handlers up past the limit.
    private func admit(
        _ channel: any Channel,
        limit: Int,
        makeHandler: (_ admitted: Bool, _ settled: (@Sendable () -> Void)?) -> ServerConnectionHandler
    ) -> ServerConnectionHandler {
        let admitted = self.state.withLock { state in
            guard state.admitted < limit else { return false }
            state.admitted += 1
            return true
        }
        var settled: (@Sendable () -> Void)?
        if admitted {
            settled = { @Sendable in self.state.withLock { $0.admitted -= 1 } }
        }
        let handler = makeHandler(admitted, settled)
        channel.closeFuture.assumeIsolated().whenComplete { _ in handler.channelClosed() }
        return handler
    }

    private func beginShutdown(serverChannel: any Channel) {
        let connections = self.state.withLock { state in
            state.isShuttingDown = true
            return Array(state.connections.values)
        }
        serverChannel.close(promise: nil)
        for connection in connections {
            connection.pipeline.fireUserInboundEventTriggered(WireServerShutdownEvent())
        }
        // Requests that outlive the grace period are cut off so shutdown always ends.
        serverChannel.eventLoop.scheduleTask(in: self.configuration.shutdownGracePeriod) {
            let remaining = self.state.withLock { Array($0.connections.values) }
            for connection in remaining {
                connection.close(promise: nil)
            }
        }
    }

    /// One connection's life. Never throws: a bad peer ends its own connection, not the server.
    private func serve(_ channel: any Channel) async {
        let key = ObjectIdentifier(channel)
        let shuttingDown = self.state.withLock { state in
            state.connections[key] = channel
            return state.isShuttingDown
        }
        if shuttingDown {
            channel.pipeline.fireUserInboundEventTriggered(WireServerShutdownEvent())
        }
        defer { _ = self.state.withLock { $0.connections.removeValue(forKey: key) } }
        // Cancellation (the server task cancelled rather than shut down gracefully) closes at once.
        await withTaskCancellationHandler {
            _ = try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    static func dispatch(
        _ incoming: WireServerRequest,
        handlers: [String: Registration],
        maxFrameLength: Int,
        logger: Logger
    ) async -> WireFrame {
        let id = incoming.correlationID
        guard let handler = handlers[incoming.request.method]?.handler else {
            return Self.errorFrame(.unknownMethod(incoming.request.method), id: id)
        }
        let context = WireRequestContext(
            method: incoming.request.method,
            requestID: incoming.request.requestID,
            traceParent: incoming.request.traceParent,
            deadline: incoming.deadline,
            peer: incoming.peer,
            correlationID: id,
            baseLogger: logger
        )
        // A server span per call, continuing the trace the request's `traceparent` names; the handler runs in it, so
        // the calls and statements it makes are its children.
        let outcome = await withSpan(
            incoming.request.method,
            context: WireTraceHeaders.extract(incoming.request.traceParent),
            ofKind: .server
        ) { span -> Result<ByteBuffer, any Error> in
            if span.isRecording {
                span.attributes["rpc.system"] = "konto-wire"
                span.attributes["rpc.method"] = incoming.request.method
                span.attributes["konto.peer"] = incoming.peer
            }
            do {
                return .success(try await handler(incoming.request.payload, context))
            } catch {
                // The code only, never the error's text: a span leaves the process.
                span.setStatus(SpanStatus(code: .error))
                span.attributes["konto.error_code"] = Self.traceCode(of: error)
                return .failure(error)
            }
        }
        // The context's logger is built only when something is logged: building it sets metadata, which a stream
        // log handler renders at once (measured: 2% of the server's time at 64 connections, spent on every answer).
        return Self.answerFrame(id: id, outcome: outcome, maxFrameLength: maxFrameLength, logger: context.logger)
    }

    /// The stable code an error answers with (what a span records of it).
    static func traceCode(of error: any Error) -> String {
        if let error = error as? any WireErrorConvertible { return error.wireErrorCode.rawValue }
        if let error = error as? WireError { return error.code.rawValue }
        return KontoErrorCode.internalError.rawValue
    }

    /// The last frame of a subscription: an empty response when its handler returned, else its error.
    static func runSubscription(
        _ incoming: WireServerRequest,
        handler: RawSubscriptionHandler,
        subscription: WireSubscription,
        maxFrameLength: Int,
        logger: Logger
    ) async -> WireFrame {
        let context = WireRequestContext(
            method: incoming.request.method,
            requestID: incoming.request.requestID,
            traceParent: incoming.request.traceParent,
            deadline: nil,
            peer: incoming.peer,
            correlationID: incoming.correlationID,
            baseLogger: logger
        )
        let outcome: Result<ByteBuffer, any Error>
        do {
            try await handler(incoming.request.payload, context, subscription)
            outcome = .success(ByteBuffer())
        } catch {
            outcome = .failure(error)
        }
        return Self.answerFrame(id: incoming.correlationID, outcome: outcome, maxFrameLength: maxFrameLength, logger: context.logger)
    }

    /// The frame answering request `id` with its handler's outcome. Never over `maxFrameLength`: an
    /// answer that would not fit becomes `wire.frameTooLarge` or loses its details, since the peer closes
    /// the whole connection on a frame over its limit. `package` for the fuzz target, which drives it.
    package static func answerFrame(
        id: UInt64,
        outcome: Result<ByteBuffer, any Error>,
        maxFrameLength: Int,
        logger: @autoclosure () -> Logger
    ) -> WireFrame {
        let body: WireErrorBody
        switch outcome {
        case .success(let payload):
            guard payload.readableBytes + WireFrame.headerSize <= maxFrameLength else {
                logger().warning("Wire response exceeds the maximum frame length")
                return Self.errorFrame(.frameTooLarge(payload.readableBytes + WireFrame.headerSize, max: maxFrameLength), id: id)
            }
            return WireFrame(correlationID: id, message: .response(.init(payload: payload)))
        case .failure(let error as WireError):
            body = WireErrorBody(error)
        case .failure(let error as any WireErrorConvertible):
            body = WireErrorBody(
                code: error.wireErrorCode,
                message: error.wireErrorMessage,
                isRetryable: error.wireErrorIsRetryable,
                details: error.wireErrorDetails
            )
        case .failure(is CancellationError):
            return Self.errorFrame(.shuttingDown, id: id)
        case .failure(let error):
            logger().error("Wire method handler failed", metadata: ["konto.error": "\(error)"])
            return Self.errorFrame(
                WireError(code: WireError.Code.internalError, message: "internal error"),
                id: id
            )
        }
        let frame = WireFrame(correlationID: id, message: .error(body))
        // Details that would not fit in a frame are dropped: the code and message still go out.
        guard WireFrameCodec.encodedSize(frame) - WireFrame.lengthFieldSize > maxFrameLength else { return frame }
        logger().warning("Wire error details exceed the maximum frame length")
        var trimmed = body
        trimmed.details = []
        return WireFrame(correlationID: id, message: .error(trimmed))
    }

    private static func errorFrame(_ error: WireError, id: UInt64) -> WireFrame {
        WireFrame(correlationID: id, message: .error(WireErrorBody(error)))
    }
}
