import Foundation
import Synchronization

/// The encodings a mail's headers and bodies need (RFC 2045, RFC 2047, RFC 5322): written here because no MIME
/// package is in the mirror; Python's `email` package reads every message back in the tests.
public enum MIMEEncoding {
    /// A header value as RFC 2047 encoded words (UTF-8, base64) when it is anything but printable ASCII, so neither
    /// non-ASCII text nor a line break in a value (a name someone chose) can change the message's structure.
    /// Words hold at most 45 bytes (60 characters of base64), never splitting a character, and are folded onto
    /// continuation lines.
    static func headerValue(_ text: String) -> String {
        // A line break or another control character has no place in a subject or a name: a space instead.
        let text = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        let printable = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        if printable && text.utf8.count <= 900 && !text.contains("=?") {
            return text
        }
        return encodedWords(text)
    }

    /// RFC 2047 encoded words (UTF-8, base64) of `text`, its control characters made spaces.
    static func encodedWords(_ text: String) -> String {
        let text = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty {
            words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
        }
        return words.joined(separator: "\r\n ")
    }

    /// A display name (a phrase, RFC 5322 §3.2.5): as it is when it is letters, digits and spaces only, else encoded
    /// words, so no colon, `@`, comma or angle bracket in a name is read as part of an address.
    static func displayName(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == " " }
        return plain ? text : encodedWords(text)
    }

    /// Quoted-printable (RFC 2045 §6.7) of UTF-8 text with CRLF line ends: lines of at most 76 characters, `=`
    /// and non-ASCII escaped, trailing whitespace escaped, a leading dot escaped (so no line is SMTP's end of data,
    /// whatever the transport does), any line break (CR, LF, CRLF) made CRLF.
    static func quotedPrintable(_ text: String) -> String {
        // On bytes, not Strings (a String's count is a walk over its characters, String(format:) goes through
        // Foundation): this ran for every line of every mail and was the courier's largest cost after the templates.
        let hex = Array("0123456789ABCDEF".utf8)
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        var output: [UInt8] = []
        output.reserveCapacity(normalized.utf8.count + normalized.utf8.count / 8 + 16)
        let lines = normalized.utf8.split(separator: 0x0A, omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            // Characters on the output line so far.
            var length = 0
            let last = line.count - 1
            for (position, byte) in line.enumerated() {
                var escaped: Bool
                switch byte {
                case 0x3D, 0x00..<0x20, 0x7F...:
                    // Tabs too: escaped wherever they are, so none is trailing whitespace a relay may strip.
                    escaped = true
                case 0x20 where position == last:
                    escaped = true
                case 0x2E where length == 0:
                    escaped = true
                default:
                    escaped = false
                }
                // A soft line break keeps every line within 76 characters (75 and the `=`).
                if length + (escaped ? 3 : 1) > 75 {
                    output += [0x3D, 0x0D, 0x0A]
                    length = 0
                    if byte == 0x2E { escaped = true }
                }
                if escaped {
                    output += [0x3D, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                    length += 3
                } else {
                    output.append(byte)
                    length += 1
                }
            }
            if index < lines.count - 1 { output += [0x0D, 0x0A] }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// RFC 5322's date: `Thu, 26 Nov 2026 05:30:00 +0000`.
    static func date(_ date: Date) -> String {
        utc(date, format: "EEE, dd MMM yyyy HH:mm:ss '+0000'")
    }

    /// `date` in UTC as `format` (a DateFormatter pattern) writes it, in English whatever the machine's locale.
    /// One formatter per format, made once: making one (ICU's set-up) cost more than the rest of a mail's rendering.
    public static func utc(_ date: Date, format: String) -> String {
        formatters.withLock { formatters in
            let formatter = formatters[format] ?? {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = format
                return formatter
            }()
            formatters[format] = formatter
            return formatter.string(from: date)
        }
    }

    private static let formatters = Mutex<[String: DateFormatter]>([:])
}
