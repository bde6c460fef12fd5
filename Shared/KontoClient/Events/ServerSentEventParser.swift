/// Server-Sent Events as the WHATWG HTML standard parses them ("Interpreting an event stream"), as a pure state
/// machine fed bytes: lines end at CR, LF or CRLF; `:` starts a comment; `field: value` with one leading space
/// removed; `data` lines joined by LF; a blank line dispatches the event (none without data); `id` containing NUL
/// is ignored; the last id carries over to later events; an unfinished event at the end of the stream is dropped.
///
/// Why not a package: mattt/EventSource (in the mirror) has such a parser, but its 1.1.1 does not build on Linux
/// (`URLSession.bytes` is missing from FoundationNetworking). Tests cover the standard's examples.
struct ServerSentEventParser {
    struct Event: Sendable, Equatable {
        var id: String?
        var type: String
        var data: String
    }

    /// The longest line kept (bytes); a longer one is cut, so a hostile stream cannot grow memory without bound.
    static let maximumLineBytes = 1 << 20

    private var line: [UInt8] = []
    private var lastByteWasCR = false
    private var data: [UInt8] = []
    private var hasData = false
    private var type: String?
    private(set) var lastEventId: String?

    /// Feeds one byte; an event when it completes one.
    mutating func feed(_ byte: UInt8) -> Event? {
        if lastByteWasCR {
            lastByteWasCR = false
            if byte == UInt8(ascii: "\n") { return nil }
        }
        switch byte {
        case UInt8(ascii: "\r"):
            lastByteWasCR = true
            return endLine()
        case UInt8(ascii: "\n"):
            return endLine()
        default:
            if line.count < Self.maximumLineBytes { line.append(byte) }
            return nil
        }
    }

    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line[...]
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "data":
            if hasData { data.append(UInt8(ascii: "\n")) }
            data += value
            hasData = true
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "id" where !value.contains(0):
            lastEventId = String(decoding: value, as: UTF8.self)
        default:
            // `retry` and unknown fields: nothing the client uses.
            break
        }
        return nil
    }

    private mutating func dispatch() -> Event? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            type = nil
        }
        guard hasData else { return nil }
        let name = type.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        return Event(id: lastEventId, type: name, data: String(decoding: data, as: UTF8.self))
    }
}
