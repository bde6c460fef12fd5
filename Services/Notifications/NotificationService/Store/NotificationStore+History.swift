import KontoContracts
import KontoModel

extension NotificationStore {
    /// The account's events still kept, read in pages in the feed's order; the newest
    /// ``NotificationsAccountHistory/maximumEvents`` are answered.
    public func accountHistory(_ request: NotificationsAccountHistoryRequest) async throws(ServiceError) -> NotificationsAccountHistory {
        guard !request.accountId.isEmpty, request.accountId.utf8.count <= 255 else {
            throw ServiceError.notificationsInvalidRequest("an accountId has 1 to 255 bytes")
        }
        let maximum = NotificationsAccountHistory.maximumEvents
        var kept: [AccountEvent] = []
        var complete = true
        var cursor: TailCursor?
        while true {
            let start = cursor
            let page = try await stored { () async throws(NotificationStorageError) in
                try await storage.accountEvents(accountId: request.accountId, after: start, limit: Self.historyPage)
            }
            kept += page.map(\.event)
            if kept.count > maximum {
                kept.removeFirst(kept.count - maximum)
                complete = false
            }
            guard page.count == Self.historyPage, let last = page.last else { break }
            cursor = last.cursor
        }
        return NotificationsAccountHistory(events: kept, complete: complete)
    }

    static let historyPage = 500
}
