import KontoPostgres
import KontoTesting
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

@Suite("Pinned connections, one per event loop")
struct PinnedConnectionsTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.pinned")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs `body` with pinned connections to `configuration` on a two-loop group, running until `body` returns.
    private static func withPinned<Result: Sendable>(
        _ configuration: PostgresConnection.Configuration,
        _ body: (PinnedConnections, [any EventLoop]) async throws -> Result
    ) async throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let pinned = PinnedConnections(configuration: configuration, eventLoopGroup: group, logger: logger)
        let result = try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await pinned.run() }
            defer { tasks.cancelAll() }
            return try await body(pinned, pinned.eventLoops)
        }
        try await group.shutdownGracefully()
        return result
    }

    private static func backendPID(_ connection: PostgresConnection) async throws -> Int32 {
        var pid: Int32 = 0
        for try await value in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) {
            pid = value
        }
        return pid
    }

    @Test("each loop opens one connection, on that loop, shared by concurrent callers and reused")
    func oneConnectionPerLoop() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await Self.withPinned(database.connectionConfiguration) { pinned, loops in
                #expect(loops.count == 2)
                // Concurrent first calls on one loop share one connection attempt.
                let first = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { tasks in
                    for _ in 0..<8 {
                        tasks.addTask { ObjectIdentifier(try await pinned.connection(on: loops[0])) }
                    }
                    return try await tasks.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
                }
                #expect(first.count == 1)
                let a = try await pinned.connection(on: loops[0])
                let b = try await pinned.connection(on: loops[1])
                #expect(first == [ObjectIdentifier(a)], "a later call reuses the open connection")
                #expect(a !== b)
                #expect(a.eventLoop === loops[0])
                #expect(b.eventLoop === loops[1])
                #expect(try await Self.backendPID(a) != Self.backendPID(b))
            }
        }
    }

    @Test("a connection the server closed is replaced on the next call")
    func replacedAfterClose() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await Self.withPinned(database.connectionConfiguration) { pinned, loops in
                let doomed = try await pinned.connection(on: loops[0])
                let pid = try await Self.backendPID(doomed)
                _ = try await TestDatabase.withClient(database, logger: Self.logger) { client in
                    try await client.query("SELECT pg_terminate_backend(\(pid))", logger: Self.logger)
                }
                // The close reaches the client asynchronously; wait for it instead of guessing a delay.
                try? await doomed.closeFuture.get()
                let fresh = try await pinned.connection(on: loops[0])
                #expect(fresh !== doomed)
                #expect(try await Self.backendPID(fresh) != pid)
            }
        }
    }

    @Test("an unreachable server fails the call with a connection error, promptly")
    func unreachable() async throws {
        // A port that was just free: nothing listens there.
        let port = try await Self.freePort()
        let configuration = PostgresConnection.Configuration(host: "127.0.0.1", port: port, username: "nobody", password: nil, database: "none", tls: .disable)
        try await Self.withPinned(configuration) { pinned, loops in
            for _ in 0..<2 {
                let error = await #expect(throws: (any Error).self) { try await pinned.connection(on: loops[0]) }
                #expect(error.map(PostgresFailure.isUnavailable) == true)
            }
        }
    }

    @Test("once run ends, open connections are closed and calls are refused as unavailable")
    func closedAfterRun() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let pinned = PinnedConnections(configuration: database.connectionConfiguration, eventLoopGroup: group, logger: Self.logger)
            let loop = pinned.eventLoops[0]
            let running = Task { try await pinned.run() }
            let connection = try await pinned.connection(on: loop)
            running.cancel()
            try await running.value
            #expect(connection.isClosed)
            let error = await #expect(throws: StorageUnavailableError.self) { try await pinned.connection(on: loop) }
            #expect(error?.reason == .poolUnavailable)
            try await group.shutdownGracefully()
        }
    }

    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}
