import NIOCore
import NIOPosix
import PostgresNIO

/// Tells connection-level failures (the database is away, try again) from errors of the query itself.
public enum PostgresFailure {
    /// The ``StorageUnavailableError`` for `error` when it is a connection-level failure, otherwise `nil`.
    public static func unavailability(of error: any Error) -> StorageUnavailableError? {
        if let error = error as? StorageUnavailableError {
            return error
        }
        guard let reason = reason(for: error) else {
            return nil
        }
        return StorageUnavailableError(reason, underlying: error)
    }

    /// Whether `error` means the database is unavailable rather than the request being wrong.
    public static func isUnavailable(_ error: any Error) -> Bool {
        unavailability(of: error) != nil
    }

    /// A loggable summary: the driver's error code and SQLSTATE, never the query, its values or the server's message
    /// (which may quote a value, e.g. in a constraint violation's detail).
    public static func summary(of error: any Error) -> String {
        switch error {
        case let error as PostgresTransactionError:
            let first = [error.beginError, error.closureError, error.commitError].lazy.compactMap { $0 }.first
            return "transaction: " + (first.map(summary(of:)) ?? "unknown")
        case let error as PSQLError:
            let state = error.serverInfo?[.sqlState].map { " sqlstate=\($0)" } ?? ""
            return "PSQLError(\(error.code))\(state)"
        case let error as StorageUnavailableError:
            return error.description
        default:
            return String(describing: type(of: error))
        }
    }

    /// SQLSTATEs that say the server, not the statement, is the problem: class 08 (connection exception),
    /// admin/crash shutdown, "the database system is starting up", and no free connection slots.
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "53300"]

    private static func reason(for error: any Error) -> StorageUnavailableError.Reason? {
        switch error {
        case let error as PostgresTransactionError:
            // The first error of the transaction decides; a failed rollback after it says nothing new.
            return [error.beginError, error.closureError, error.commitError].lazy.compactMap { $0 }.first.flatMap(reason(for:))
        case let error as StorageUnavailableError:
            return error.reason
        case is OperationTimeoutError:
            return .timedOut
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                return .connectionFailed
            case .poolClosed:
                return .poolUnavailable
            case .queryCancelled:
                // A cancelled lease or query is our own doing (a caller went away), not an outage.
                return nil
            case .server:
                guard let state = error.serverInfo?[.sqlState] else { return nil }
                return state.hasPrefix("08") || unavailableStates.contains(state) ? .serverUnavailable : nil
            default:
                return nil
            }
        case let error where isPoolFailure(error):
            // A lease cancelled before the pool queued it comes through as the pool's own `requestCancelled`
            // (seen under load), not as `PSQLError.queryCancelled`: still a caller that went away.
            return String(describing: error).contains("requestCancelled") ? nil : .poolUnavailable
        case is NIOConnectionError, is ChannelError:
            return .connectionFailed
        case let error as IOError:
            return connectionErrnos.contains(error.errnoCode) ? .connectionFailed : nil
        default:
            return nil
        }
    }

    /// `PostgresClient` turns its pool's shutdown and cancelled leases into `PSQLError`s, but lets the rest through
    /// as `ConnectionPoolError` (today: the circuit breaker after failing to connect for a minute), a type of
    /// postgres-nio's underscored pool module. That module is not imported here, so the type is recognised by name.
    static func isPoolFailure(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)) == "_ConnectionPoolModule.ConnectionPoolError"
    }

    private static let connectionErrnos: Set<Int32> = [
        ECONNREFUSED, ECONNRESET, ECONNABORTED, EPIPE, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, ENETDOWN, ENOTCONN,
    ]
}
