import AsyncHTTPClient
import Foundation
import GatewayService
import KontoContracts
import KontoModel
import KontoWire
import NIOCore
import NIOHTTP1
import Testing

/// `GET /v1/account/events`: the caller's events as Server-Sent Events, resumable, ending with the session.
@Suite("Gateway event stream", .serialized)
struct GatewayEventStreamTests {
    struct ServerSentEvent: Sendable {
        var id: String?
        var event: String?
        var data: String

        var object: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]) ?? [:] }
    }

    /// Reads one stream: events as they arrive, and whether (and how) it ended.
    actor StreamReader {
        private var buffer = ""
        private(set) var events: [ServerSentEvent] = []
        private(set) var ended = false

        func append(_ text: String) {
            buffer += text
            while let range = buffer.range(of: "\n\n") {
                let block = buffer[..<range.lowerBound]
                buffer.removeSubrange(..<range.upperBound)
                var event = ServerSentEvent(data: "")
                var isComment = true
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(":") { continue }
                    isComment = false
                    if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
                    if line.hasPrefix("event: ") { event.event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
                }
                if !isComment { events.append(event) }
            }
        }

        func end() { ended = true }
    }

    /// Opens the stream in a task that feeds `reader` until the stream ends.
    static func open(
        _ gateway: GatewayHarness.Running,
        token: String,
        lastEventID: String? = nil,
        into reader: StreamReader
    ) async throws -> (status: Int, task: Task<Void, any Error>) {
        var request = HTTPClientRequest(url: gateway.baseURL + "/v1/account/events")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response = try await gateway.http.execute(request, timeout: .seconds(60))
        let task = Task {
            for try await chunk in response.body {
                await reader.append(String(buffer: chunk))
            }
            await reader.end()
        }
        return (Int(response.status.code), task)
    }

    /// Waits (bounded) until `condition` holds for the reader.
    static func until(_ reader: StreamReader, _ what: String, _ condition: @escaping @Sendable ([ServerSentEvent], Bool) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if condition(await reader.events, await reader.ended) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for \(what); saw \(await reader.events.map { $0.event ?? "?" })")
    }

    @Test("a new stream starts at the present (no history), events arrive in order and thin, resume after Last-Event-ID, never carry a reset token or a userId change's userIds, and the stream ends at logout")
    func stream() async throws {
        try await GatewayHarness.withGateway(configure: { $0.eventStreamHeartbeat = .milliseconds(300) }) { gateway in
            let (token, accountId) = try await gateway.signUp("ida@example.org")
            // History a stolen session must not read: the sign-up's associatedAccount and this change.
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"former@example.org"}}"#, token: token).status == 200)
            // History once Notifications has it (Identity and Profile relay their outboxes a moment later).
            try await gateway.withService(port: gateway.notificationsPort, server: NotificationsContract.serviceName) { notifications in
                let feed = try await notifications.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: accountId), credit: 8)
                var iterator = feed.makeAsyncIterator()
                // The sign-up's associatedAccount and verification mail request, and this change (in any order).
                var changeStored = false
                while !changeStored, let delivery = try await iterator.next() {
                    changeStored = delivery.event.kind.name == "detailsChanged"
                    feed.acknowledge(delivery)
                }
                feed.cancel()
            }
            let reader = StreamReader()
            // Answered once the stream is open: nothing stored from here on is missed.
            let (status, task) = try await Self.open(gateway, token: token, into: reader)
            #expect(status == 200)

            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"ida@example.org"}}"#, token: token).status == 200)
            // Profile's event and Identity's come through two relays, in no order between them: the reset is asked for
            // once the change is on the stream, so the order below is the stream's, not the relays' race.
            try await Self.until(reader, "detailsChanged") { events, _ in events.contains { $0.event == "detailsChanged" } }
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"ida@example.org"}"#).status == 202)
            try await Self.until(reader, "detailsChanged and passwordResetRequested") { events, _ in
                events.contains { $0.event == "detailsChanged" } && events.contains { $0.event == "passwordResetRequested" }
            }
            let changed = try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"ida.new@example.org"}"#, token: token)
            #expect(changed.status == 204 || changed.status == 200, "\(changed.status)")
            try await Self.until(reader, "userIdChanged") { events, _ in events.contains { $0.event == "userIdChanged" } }
            let events = await reader.events
            #expect(events.map(\.event) == ["detailsChanged", "passwordResetRequested", "userIdChanged"])
            // Thin: the changed key's name, not its values; a userId change without the userIds.
            #expect(events[0].object["keys"] as? [String] == ["email"])
            #expect(events[0].object["previous"] == nil && events[0].object["new"] == nil)
            #expect(events[2].object["previous"] == nil && events[2].object["new"] == nil)
            #expect(!events.contains { String(describing: $0.object).contains("ida.new@example.org") })
            #expect(events.allSatisfy { $0.object["accountId"] as? String == accountId })
            let reset = try #require(events.first { $0.event == "passwordResetRequested" })
            #expect(reset.object["token"] == nil && reset.object["sealedToken"] == nil)
            #expect(reset.object["userId"] as? String == "ida@example.org")
            // The id line and the data's id are the same text, lowercase as Konto writes ids everywhere.
            #expect(events.allSatisfy { $0.id == $0.object["id"] as? String && $0.id == $0.id?.lowercased() })

            // Resuming after the first event replays exactly the later ones.
            let resumed = StreamReader()
            let first = try #require(events.first?.id)
            let (resumedStatus, resumedTask) = try await Self.open(gateway, token: token, lastEventID: first, into: resumed)
            #expect(resumedStatus == 200)
            try await Self.until(resumed, "the replay") { replayed, _ in replayed.count >= events.count - 1 }
            #expect(await resumed.events.prefix(events.count - 1).map(\.id) == events.dropFirst().map(\.id))

            // Logging out ends both streams.
            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
            try await Self.until(reader, "the end of the stream") { _, ended in ended }
            try await Self.until(resumed, "the end of the resumed stream") { _, ended in ended }
            try await task.value
            try await resumedTask.value
        }
    }

    @Test("without a valid session the stream is refused with 401; a malformed Last-Event-ID with 400")
    func refused() async throws {
        try await GatewayHarness.withGateway { gateway in
            let unauthenticated = try await gateway.request(.GET, "/v1/account/events", token: "nope", headers: [("Accept", "text/event-stream")])
            #expect(unauthenticated.status == 401)
            let (token, _) = try await gateway.signUp("joan@example.org")
            let malformed = try await gateway.request(.GET, "/v1/account/events", token: token, headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "not-an-id")])
            #expect(malformed.status == 400)
            #expect(malformed.code == "request.malformed")
        }
    }
}
