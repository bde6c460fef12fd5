extension Timestamp {
    /// This moment moved by `duration` (to the millisecond).
    public func adding(_ duration: Duration) -> Timestamp {
        Timestamp(milliseconds: milliseconds + duration.milliseconds)
    }
}

extension Duration {
    /// Whole milliseconds (timestamps are kept to the millisecond).
    public var milliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }
}
