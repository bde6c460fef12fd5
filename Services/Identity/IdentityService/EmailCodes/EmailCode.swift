/// A sign-in code mailed to the userId: eight decimal digits, easy to type from a phone's mail into another device.
/// Single-use and short-lived, and attempts are throttled like passwords, so 10^8 codes are not guessed in time.
enum EmailCode {
    static let digits = 8

    /// A uniformly random code, zero-padded (the system generator is cryptographically secure).
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = UInt32.random(in: 0..<100_000_000, using: &generator)
        let text = String(value)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// Exactly ``digits`` ASCII digits: anything else is not a code (refused without counting as a guess).
    static func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == digits && code.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
