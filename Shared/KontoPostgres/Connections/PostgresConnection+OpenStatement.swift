import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// Executes `statement` if the connection is still open, checking and sending it on the connection's event loop;
    /// a closed connection fails at once with ``StorageUnavailableError`` (`connectionFailed`, its underlying error a
    /// ``PostgresConnectionClosedError``: nothing was sent, so another connection may be tried).
    ///
    /// Why not `execute(_:logger:)` alone: postgres-nio (1.33.2) sends a statement with `channel.write(_, promise: nil)`.
    /// Once a closed channel's handlers are removed (NIO does that just after the close), that write is dropped
    /// and the statement's promise is never completed: the call waits forever. The pool can hand out a connection in
    /// the moment between its close and the pool hearing of it, which CI saw after `pg_terminate_backend`: a read
    /// waited out its whole 20 s deadline (`PostgresProfileStorageTests.connectionsEnded`). On the loop, a connection
    /// found active still has its handlers, so the statement reaches them and is failed by them if the connection
    /// closes later. `PostgresConnectionOpenStatementTests` shows both the plain call hanging and this one failing.
    ///
    /// - Parameter executor: a task executor that runs its jobs on this connection's `eventLoop`.
    public func executeIfOpen<Statement: PostgresPreparedStatement>(
        _ statement: Statement,
        on executor: any TaskExecutor,
        logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
        try await withTaskExecutorPreference(executor) {
            // Both the check and the write below must happen on the loop, or the close can fall between them.
            self.eventLoop.preconditionInEventLoop()
            guard !self.isClosed else {
                throw StorageUnavailableError(.connectionFailed, underlying: PostgresConnectionClosedError(closeFuture: self.closeFuture))
            }
            // Up to its first suspension (after the write), `execute` runs here, on the loop.
            return try await self.execute(statement, logger: logger)
        }
    }
}

/// The statement was not sent: its connection had closed. Nothing reached the server, so trying another connection
/// is safe, once the pool knows this one is gone (``waitUntilClosed()``).
public struct PostgresConnectionClosedError: Error, Sendable, CustomStringConvertible {
    private let closeFuture: EventLoopFuture<Void>

    public init(closeFuture: EventLoopFuture<Void>) {
        self.closeFuture = closeFuture
    }

    /// Returns when the connection has finished closing. The pool watches the same future from the connection's
    /// start, so by then it has dropped the connection and a new lease gets another.
    public func waitUntilClosed() async {
        _ = try? await closeFuture.get()
    }

    public var description: String { "the connection closed before the statement was sent" }
}
