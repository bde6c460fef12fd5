import Foundation
import KontoModel

/// Events as columns, one array per column, for one `unnest` insert of any number of events (an outbox, the event
/// store): one statement instead of one per event.
public struct AccountEventColumns: Sendable {
    public var ids: [UUID] = []
    public var accountIds: [String] = []
    public var types: [String] = []
    /// Each event's JSON (sorted keys).
    public var documents: [String] = []
    public var times: [Date] = []

    public init(_ events: [AccountEvent]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for event in events {
            ids.append(event.id)
            accountIds.append(event.accountId)
            types.append(event.kind.name)
            documents.append(String(decoding: try encoder.encode(event), as: UTF8.self))
            times.append(event.time)
        }
    }
}
