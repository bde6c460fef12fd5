@testable import KontoClient
import Testing

/// The event-stream parser on the examples of the WHATWG HTML standard ("Server-sent events") and on hostile input.
@Suite("Server-Sent Events parser")
struct ServerSentEventParserTests {
    typealias Event = ServerSentEventParser.Event

    static func parse(_ text: String) -> [Event] {
        var parser = ServerSentEventParser()
        return text.utf8.compactMap { parser.feed($0) }
    }

    @Test("multi-line data is joined with line feeds")
    func multiLineData() {
        #expect(Self.parse("data: YHOO\ndata: +2\ndata: 10\n\n") == [Event(id: nil, type: "message", data: "YHOO\n+2\n10")])
    }

    @Test("comments are skipped, ids carry over, an empty id resets, one leading space is removed")
    func idsAndComments() {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        #expect(Self.parse(stream) == [
            Event(id: "1", type: "message", data: "first event"),
            Event(id: "", type: "message", data: "second event"),
            Event(id: "", type: "message", data: " third event"),
        ])
    }

    @Test("empty data lines count; an event not ended by a blank line is dropped")
    func emptyDataAndUnfinished() {
        #expect(Self.parse("data\n\ndata\ndata\n\ndata:") == [Event(id: nil, type: "message", data: ""), Event(id: nil, type: "message", data: "\n")])
        #expect(Self.parse("data:test\n\ndata: test\n\n").map(\.data) == ["test", "test"])
    }

    @Test("CR, LF and CRLF all end lines; event names the type; no data, no event; an id with NUL is ignored")
    func lineEndingsAndTypes() {
        #expect(Self.parse("event: add\r\ndata: 73857293\r\n\r\nevent: remove\rdata: 2153\r\rdata: 1\n\n") == [
            Event(id: nil, type: "add", data: "73857293"),
            Event(id: nil, type: "remove", data: "2153"),
            Event(id: nil, type: "message", data: "1"),
        ])
        #expect(Self.parse("event: lonely\n\n").isEmpty)
        #expect(Self.parse("id: a\u{0}b\ndata: x\n\n") == [Event(id: nil, type: "message", data: "x")])
        #expect(Self.parse("retry: 10\nunknown: y\ndata: x\n\n") == [Event(id: nil, type: "message", data: "x")])
    }

    @Test("a line longer than the limit is cut, not kept whole")
    func longLine() {
        var parser = ServerSentEventParser()
        for byte in "data: ".utf8 { _ = parser.feed(byte) }
        for _ in 0..<(ServerSentEventParser.maximumLineBytes + 1_000) { _ = parser.feed(UInt8(ascii: "x")) }
        _ = parser.feed(UInt8(ascii: "\n"))
        let event = parser.feed(UInt8(ascii: "\n"))
        #expect(event?.data.utf8.count == ServerSentEventParser.maximumLineBytes - "data: ".utf8.count)
    }
}
