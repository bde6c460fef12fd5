/// One SMTP reply (RFC 5321 §4.2): a three-digit code and its text lines.
public struct SMTPReply: Sendable, Equatable {
    public var code: Int
    public var lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    public var isPositive: Bool { (200..<400).contains(code) }
    public var isTransient: Bool { (400..<500).contains(code) }
    public var text: String { lines.joined(separator: " ") }
}

/// Reads SMTP replies from the bytes a server sends, as they arrive: lines of `DDD-text` until `DDD text`, ended by
/// CRLF (a bare LF is taken too). Bounded before anything is kept: a line of at most 2,048 bytes, a reply of at
/// most 100 lines; anything else is a protocol violation.
public struct SMTPReplyParser: Sendable {
    public static let maximumLineLength = 2_048
    public static let maximumLines = 100

    private var line: [UInt8] = []
    private var pending: (code: Int, lines: [String])?

    public init() {}

    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(MailError) -> [SMTPReply] {
        var replies: [SMTPReply] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if let reply = try take(line) { replies.append(reply) }
                line = []
            } else {
                guard line.count < Self.maximumLineLength else { throw MailError(.protocolViolation, "a reply line over \(Self.maximumLineLength) bytes") }
                line.append(byte)
            }
        }
        return replies
    }

    private mutating func take(_ line: [UInt8]) throws(MailError) -> SMTPReply? {
        guard line.count >= 3, line[0..<3].allSatisfy({ (UInt8(ascii: "2")...UInt8(ascii: "5")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(line[0]),
              line.count == 3 || line[3] == UInt8(ascii: " ") || line[3] == UInt8(ascii: "-")
        else { throw MailError(.protocolViolation, "not an SMTP reply line") }
        let code = Int(line[0] - 48) * 100 + Int(line[1] - 48) * 10 + Int(line[2] - 48)
        let text = line.count > 4 ? String(decoding: line[4...], as: UTF8.self) : ""
        if let pending, pending.code != code { throw MailError(.protocolViolation, "a reply's lines with different codes") }
        var lines = pending?.lines ?? []
        lines.append(text)
        guard lines.count <= Self.maximumLines else { throw MailError(.protocolViolation, "a reply of over \(Self.maximumLines) lines") }
        if line.count > 3 && line[3] == UInt8(ascii: "-") {
            pending = (code, lines)
            return nil
        }
        pending = nil
        return SMTPReply(code: code, lines: lines)
    }
}
