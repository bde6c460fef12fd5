extension Timestamp {
    /// This moment moved by `duration` (to the millisecond), clamped into ``validMilliseconds``, never trapping on
    /// overflow.
    public func adding(_ duration: Duration) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(duration.milliseconds)
        guard !overflow else { return Timestamp(milliseconds: duration < .zero ? Self.validMilliseconds.lowerBound : Self.validMilliseconds.upperBound) }
        return Timestamp(milliseconds: sum)
    }
}

extension Duration {
    /// Whole milliseconds (timestamps are kept to the millisecond); saturating where a duration holds more.
    public var milliseconds: Int64 {
        let (scaled, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000)
        // The attoseconds add less than a second's milliseconds, with the seconds' sign: only a saturated sum overflows.
        let (sum, overflowAgain) = scaled.addingReportingOverflow(components.attoseconds / 1_000_000_000_000_000)
        guard !overflow, !overflowAgain else { return components.seconds < 0 ? .min : .max }
        return sum
    }
}
