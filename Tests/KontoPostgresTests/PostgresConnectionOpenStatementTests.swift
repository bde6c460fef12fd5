import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

/// The workaround in ``PostgresConnection/executeIfOpen(_:on:logger:)`` against the straightforward call.
@Suite("Statements on a closed connection")
struct PostgresConnectionOpenStatementTests {
    struct SelectOne: PostgresPreparedStatement {
        static let sql = "SELECT 1::int4"
        typealias Row = Int32
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }

    let logger: Logger = {
        var logger = Logger(label: "test.open-statement")
        logger.logLevel = .critical
        return logger
    }()

    @Test("on an open connection both answer; once it closed, postgres-nio's execute never returns and executeIfOpen fails at once as unavailable")
    func closedConnection() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let connection = try await PostgresConnection.connect(
                on: eventLoop, configuration: database.connectionConfiguration, id: 1, logger: logger
            )
            let executor = EventLoopTaskExecutor(eventLoop: connection.eventLoop)
            var answers: [Int32] = []
            for try await one in try await connection.execute(SelectOne(), logger: logger) { answers.append(one) }
            for try await one in try await connection.executeIfOpen(SelectOne(), on: executor, logger: logger) { answers.append(one) }
            #expect(answers == [1, 1])

            try await connection.close()
            // Completed after NIO removed the channel's handlers: the state a pooled connection can be leased in.
            try await connection.closeFuture.get()

            // What the workaround is for. Should postgres-nio fail this call some day, this expectation fails and
            // the workaround can go.
            await #expect(throws: OperationTimeoutError.self) {
                try await OperationTimeout.run(.seconds(1)) {
                    _ = try await connection.execute(SelectOne(), logger: logger)
                }
            }
            // Should it hang like execute, the timeout's own error fails the expectation (a generous bound: a loaded
            // machine is slow, and what matters is that it returns at all).
            let error = await #expect(throws: StorageUnavailableError.self) {
                try await OperationTimeout.run(.seconds(30)) {
                    _ = try await connection.executeIfOpen(SelectOne(), on: executor, logger: logger)
                }
            }
            #expect(error?.reason == .connectionFailed)
            // Nothing was sent: the caller may try another connection once this one is gone.
            #expect(error?.underlying is PostgresConnectionClosedError)
            await (error?.underlying as? PostgresConnectionClosedError)?.waitUntilClosed()
        }
    }
}
