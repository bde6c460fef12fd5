/// Comparisons of secrets (signatures, MACs, challenges) whose time does not depend on where they first differ.
public enum ConstantTime {
    /// Whether `left` and `right` are equal, looking at every byte (only the lengths, which are not secret, end it early).
    public static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(left, right) {
            difference |= a ^ b
        }
        return difference == 0
    }
}
