import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// One dedicated PostgreSQL connection per event loop, for a hot path that should stay on its loop.
///
/// A pooled query leases a connection that lives on any loop of the group, and pays for the lease,
/// the release and a keep-alive timer each time. A caller already on a loop (a wire request's
/// handler) that queries that loop's pinned connection sends, waits and resumes on one thread.
/// That is what batched reads use; writes, transactions and health checks stay on the pool.
///
/// Connections open on first use and again after they close (the server went away, a network
/// error): concurrent callers on one loop share one attempt, so an outage costs one failed connect
/// per loop and per batch, never one per call. Once ``run()`` ends, connections are closed and
/// further calls fail as unavailable.
public final class PinnedConnections: Service, Sendable {
    private enum Slot {
        case idle
        case connecting(EventLoopFuture<PostgresConnection>)
        case ready(PostgresConnection)
    }

    private struct State {
        var slots: [ObjectIdentifier: Slot] = [:]
        var nextID = 0
        var closed = false
    }

    private let configuration: PostgresConnection.Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())

    public init(configuration: PostgresConnection.Configuration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// The loops connections are pinned to: every loop of the group.
    public var eventLoops: [any EventLoop] {
        Array(self.eventLoopGroup.makeIterator())
    }

    /// The open connection pinned to `eventLoop`, opening it first when there is none.
    /// - Throws: the connect error, or ``StorageUnavailableError`` (`poolUnavailable`) once closed.
    public func connection(on eventLoop: any EventLoop) async throws -> PostgresConnection {
        try await self.connectionFuture(on: eventLoop).get()
    }

    /// ``connection(on:)`` for callers on the loop that chain futures instead of awaiting.
    public func connectionFuture(on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        let key = ObjectIdentifier(eventLoop)
        enum Next {
            case use(EventLoopFuture<PostgresConnection>)
            case open(id: Int, promise: EventLoopPromise<PostgresConnection>)
            case refuse
        }
        let next = self.state.withLock { state -> Next in
            guard !state.closed else { return .refuse }
            switch state.slots[key] ?? .idle {
            case .ready(let connection) where !connection.isClosed:
                return .use(eventLoop.makeSucceededFuture(connection))
            case .connecting(let future):
                return .use(future)
            case .idle, .ready:
                let promise = eventLoop.makePromise(of: PostgresConnection.self)
                state.nextID += 1
                state.slots[key] = .connecting(promise.futureResult)
                return .open(id: state.nextID, promise: promise)
            }
        }
        switch next {
        case .use(let future):
            return future
        case .refuse:
            return eventLoop.makeFailedFuture(StorageUnavailableError(.poolUnavailable))
        case .open(let id, let promise):
            PostgresConnection.connect(on: eventLoop, configuration: self.configuration, id: id, logger: self.logger)
                .whenComplete { result in self.opened(result, key: key, promise: promise) }
            return promise.futureResult
        }
    }

    private func opened(_ result: Result<PostgresConnection, any Error>, key: ObjectIdentifier, promise: EventLoopPromise<PostgresConnection>) {
        switch result {
        case .success(let connection):
            let keep = self.state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.slots[key] = .ready(connection)
                return true
            }
            guard keep else {
                connection.close().whenComplete { _ in }
                promise.fail(StorageUnavailableError(.poolUnavailable))
                return
            }
            // Forget it once closed, so the next caller opens a fresh one.
            connection.closeFuture.whenComplete { _ in
                self.state.withLock { state in
                    if case .ready(let current) = state.slots[key], current === connection {
                        state.slots[key] = .idle
                    }
                }
            }
            promise.succeed(connection)
        case .failure(let error):
            self.state.withLock { $0.slots[key] = .idle }
            self.logger.debug("pinned postgres connection failed to open", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
            promise.fail(error)
        }
    }

    /// Runs until graceful shutdown (or cancellation), then closes every pinned connection.
    public func run() async throws {
        try? await gracefulShutdown()
        let open = self.state.withLock { state -> [PostgresConnection] in
            state.closed = true
            defer { state.slots = [:] }
            return state.slots.values.compactMap { slot in
                if case .ready(let connection) = slot { return connection }
                return nil
            }
        }
        for connection in open {
            try? await connection.close()
        }
    }
}
