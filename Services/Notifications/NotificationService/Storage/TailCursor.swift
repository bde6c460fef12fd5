import KontoModel

/// A position in the order a tail reads the store: the storing transaction, then the position within the store.
///
/// PostgreSQL numbers events from a sequence when they are inserted, not when they commit, so a reader that only
/// remembered the highest position seen would skip an event whose transaction committed after a later one's. A tail
/// therefore reads events in transaction order and only those of transactions older than every transaction still
/// running (the snapshot's xmin): nothing can appear before them any more. The starting cursor also keeps the
/// snapshot it was taken in (`xmin:xmax:xip,…`), so events whose transactions had committed by then are left out
/// exactly, even those of transactions newer than one still running at the time. The memory store commits in
/// position order, so its transaction is always 0 and it has no snapshot.
public struct TailCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var transaction: UInt64
    public var position: Int64
    /// PostgreSQL's `pg_snapshot` text at the start of the tail: what had committed by then is not tailed.
    public var snapshot: String?

    /// The longest wire form: a snapshot lists the transactions running when it was taken.
    public static let maximumLength = 16 * 1024

    public init(transaction: UInt64, position: Int64, snapshot: String? = nil) {
        self.transaction = transaction
        self.position = position
        self.snapshot = snapshot
    }

    /// The wire form, `transaction.position`, then `/snapshot` when there is one.
    public var description: String {
        "\(transaction).\(position)" + (snapshot.map { "/\($0)" } ?? "")
    }

    /// Reads the wire form; nil for anything else.
    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        let halves = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let parts = halves[0].split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy(Self.isDecimal), let transaction = UInt64(parts[0]), let position = Int64(parts[1]) else {
            return nil
        }
        var snapshot: String?
        if halves.count == 2 {
            // xmin:xmax:xip1,xip2,… (the list may be empty); checked here so a malformed one never reaches SQL.
            let fields = halves[1].split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 3, Self.isDecimal(fields[0]), Self.isDecimal(fields[1]),
                  fields[2].isEmpty || fields[2].split(separator: ",", omittingEmptySubsequences: false).allSatisfy(Self.isDecimal)
            else { return nil }
            snapshot = String(halves[1])
        }
        self.init(transaction: transaction, position: position, snapshot: snapshot)
    }

    private static func isDecimal(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 20 && text.utf8.allSatisfy { (48...57).contains($0) }
    }

    public static func < (lhs: TailCursor, rhs: TailCursor) -> Bool {
        (lhs.transaction, lhs.position) < (rhs.transaction, rhs.position)
    }
}

/// An event as a tail reads it, with its place in the tail's order.
public struct TailedEvent: Sendable, Equatable {
    public var cursor: TailCursor
    public var event: AccountEvent

    public init(cursor: TailCursor, event: AccountEvent) {
        self.cursor = cursor
        self.event = event
    }
}
