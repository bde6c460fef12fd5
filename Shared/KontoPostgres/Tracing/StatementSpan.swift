import PostgresNIO
import Tracing

/// A client span around one storage operation (a statement, or the statements of one transaction), named after the
/// operation, so a trace shows where a request spent its time in PostgreSQL. postgres-nio makes no spans of its own.
/// Only the operation's name and schema are recorded, never a statement's text or values: a span leaves the process.
public enum StatementSpan {
    /// Runs `body` in a span `<schema>.<operation>`; a failure marks the span with PostgreSQL's SQLSTATE, if any.
    public static func run<Value>(
        _ operation: String,
        schema: String,
        _ body: () async throws -> Value
    ) async throws -> Value {
        let name = name(of: operation)
        return try await withSpan("\(schema).\(name)", ofKind: .client) { span in
            // Only on a span that records (a no-op span's setter still builds a dictionary).
            if span.isRecording {
                span.attributes["db.system.name"] = "postgresql"
                span.attributes["db.namespace"] = schema
                span.attributes["db.operation.name"] = name
            }
            do {
                return try await body()
            } catch {
                span.setStatus(SpanStatus(code: .error))
                if let code = Self.sqlState(of: error) {
                    span.attributes["db.response.status_code"] = code
                }
                throw error
            }
        }
    }

    /// A function's name without its argument labels (`#function` gives `credential(where:equals:)`).
    static func name(of operation: String) -> String {
        operation.firstIndex(of: "(").map { String(operation[..<$0]) } ?? operation
    }

    private static func sqlState(of error: any Error) -> String? {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] }
        if let error = error as? PostgresTransactionError, let cause = error.closureError ?? error.beginError ?? error.commitError {
            return sqlState(of: cause)
        }
        return nil
    }
}
