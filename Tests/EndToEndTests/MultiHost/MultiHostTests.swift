import Foundation
import KontoClient
import KontoModel
import KontoTestSupport
import Testing

/// The multi-host rehearsal: PostgreSQL on one host, every service on each of two more, HAProxy balancing the two
/// gateways (``MultiHostSystem``). scripts/test.sh runs this suite on its own after the rest, since it loses a host
/// under load and bounds what clients see meanwhile, which other suites' CPU would blur.
@Suite("Multi-host: two hosts behind HAProxy", .serialized, .timeLimit(.minutes(5)))
struct MultiHostTests {
    static let password = "multi host password 1"
    static let throttleFailures = 6

    @Test("sessions and changes are shared by both hosts, wrong passwords sent to both are counted once, every event reaches each webhook and every mail the SMTP server once, and a sign-in through HAProxy is one trace across the services of the host that served it")
    func sharedState() async throws {
        let namespaces = try await MultiHostSystem.with(environment: [
            "KONTO_IDENTITY_THROTTLE_FAILURES": "\(Self.throttleFailures)",
            "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "0",
        ]) { hosts in
            try await Self.balanced(hosts)
            try await Self.tracedAcrossHosts(hosts)
            try await Self.changesSeenAtTheOtherHost(hosts)
            try await Self.throttleShared(hosts)
            try await Self.eventsOnce(hosts)
            return hosts.network.hosts.values.map(\.namespace)
        }
        // Nothing of the network is left: no namespace, so no process in one either.
        let listed = try await ServiceProcess.run(VirtualNetwork.ip, arguments: ["netns", "list"]).standardOutput
        #expect(!namespaces.isEmpty)
        for namespace in namespaces {
            #expect(!listed.contains(namespace), "\(namespace) outlived the rehearsal")
        }
    }

    @Test("a host lost whole under load, then PostgreSQL restarted: clients see only 503s, none waits past the bound, nothing is lost, and the host takes work again")
    func hostLostUnderLoad() async throws {
        try await MultiHostSystem.with(environment: FaultTests.environment.merging([
            "KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE": "0",
            "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "0",
        ]) { $1 }) { hosts in
            let schema = try await hosts.client().schema()
            let load = MixedLoad(schema: schema, makeClient: { hosts.client() })
            let running = Task { await load.run(workers: 4) }
            var takenOut: Duration = .zero
            do {
                load.begin("both before")
                try await load.waitForCalls(FaultTests.callsPerPhase, in: "both before", within: .seconds(120))

                // Host b lost whole: every process SIGKILLed at once, its cable pulled.
                load.begin("b lost")
                let host = try hosts.network.host("b")
                let lostAt = ContinuousClock.now
                #expect(try await hosts.network.killEveryProcess(on: host) == KontoProcessStack.services.count)
                try await hosts.network.setLink(of: host, up: false)
                try await EndToEndSystem.waitUntil(within: .seconds(30), "HAProxy takes host b out") {
                    try await hosts.proxy.serverStates()["b"]?.status.hasPrefix("DOWN") == true
                }
                takenOut = ContinuousClock.now - lostAt
                try await load.waitForCalls(FaultTests.callsPerPhase, in: "b lost", within: .seconds(120))

                // It comes back: the cable, then its services; HAProxy gives it work again.
                load.begin("b back")
                try await hosts.network.setLink(of: host, up: true)
                let stack = try hosts.stack("b")
                await stack.reapAll()
                try stack.restartAll()
                let sessionsBefore = try await hosts.proxy.serverStates()["b"]?.sessions ?? 0
                try await hosts.waitUntilReady()
                try await load.waitForCalls(FaultTests.callsPerPhase, in: "b back", within: .seconds(120))
                try await EndToEndSystem.waitUntil(within: .seconds(30), "host b takes work again") {
                    (try await hosts.proxy.serverStates()["b"]?.sessions ?? 0) > sessionsBefore
                }

                // PostgreSQL restarted under the same load.
                load.begin("postgresql down")
                try await hosts.cluster.stop()
                try await load.waitForCalls(FaultTests.callsPerPhase, in: "postgresql down", within: .seconds(120))
                try await EndToEndSystem.waitUntil(within: .seconds(60), "a 503 while PostgreSQL is down") { load.tally("postgresql down").unavailable > 0 }
                load.begin("postgresql back")
                try await hosts.cluster.start()
                try await hosts.waitUntilReady()
                load.begin("after")
                try await load.waitForCalls(FaultTests.callsPerPhase, in: "after", within: .seconds(120))
            } catch {
                load.stop()
                await running.value
                throw error
            }
            load.stop()
            await running.value

            let total = load.total
            #expect(total.failures.isEmpty, "answers other than 503: \(total.failures.prefix(10))")
            #expect(total.unreachable == 0, "with HAProxy up, every call is answered: \(total.unreachableCalls.prefix(5))")
            if total.unreachable > 0 || !total.failures.isEmpty {
                try? hosts.proxy.log.write(toFile: "/tmp/konto-haproxy-debug.log", atomically: true, encoding: .utf8)
                // What HAProxy did with them: its lines for requests not answered 2xx, and its health changes.
                let lines = hosts.proxy.log.split(separator: "\n").filter { $0.contains("] konto ") && !$0.contains(" ---- ") && !$0.contains("<NOSRV>") }
                print("multi-host: HAProxy's requests that did not end normally (but for those with no server up)\n" + lines.prefix(80).joined(separator: "\n"))
            }
            #expect(total.slowest < FaultTests.slowestAllowed, "the slowest call took \(total.slowest)")
            for phase in ["both before", "after"] {
                let tally = load.tally(phase)
                #expect(tally.succeeded == tally.sent, "\(phase): \(tally.sent - tally.succeeded) of \(tally.sent) calls did not succeed: \(tally.unavailableCodes)")
            }
            let settled = try await FaultTests.settle(hosts.system)
            let accounts = try await FaultTests.checkAccounts(hosts.system, load: load)
            let events = try await FaultTests.checkEvents(hosts.system)
            let phases = ["both before", "b lost", "b back", "postgresql down", "postgresql back", "after"].map { phase in
                let tally = load.tally(phase)
                return "\(phase): \(tally.succeeded)/\(tally.sent) succeeded, \(tally.unavailable) 503"
            }
            print("""
                multi-host: host lost: HAProxy took it out after \(takenOut.milliseconds) ms; \(phases.joined(separator: "; ")); \
                requests=\(total.sent) slowestMs=\(total.slowest.milliseconds) accountsChecked=\(accounts) \
                eventsProduced=\(events.produced) eventsDelivered=\(events.delivered) settledMs=\(settled)
                """)
        }
    }

    /// HAProxy gives work to both gateways, and what one host made the other serves.
    static func balanced(_ hosts: MultiHostSystem) async throws {
        let before = try await hosts.proxy.serverStates()
        let proxy = try hosts.http(via: nil)
        let (_, token) = try await proxy.signUp(userId: "balanced@example.org", password: password)
        for _ in 0..<6 {
            #expect(try await proxy.send("GET", "/v1/account", token: token).status == 200)
        }
        let after = try await hosts.proxy.serverStates()
        for host in MultiHostSystem.hosts {
            #expect((after[host]?.sessions ?? 0) > (before[host]?.sessions ?? 0), "HAProxy gave host \(host) no request")
            #expect(try await hosts.http(via: host).send("GET", "/v1/account", token: token).status == 200)
        }
    }

    /// Sign-ins through HAProxy, each with a client's `traceparent`, until both hosts have served one: each is one
    /// trace (``SignInTrace``) whose gateway, Identity and Profile spans all come from the host HAProxy chose, as
    /// each host's gateway calls its own services; OTLP receiver and services on different hosts.
    static func tracedAcrossHosts(_ hosts: MultiHostSystem) async throws {
        let proxy = try hosts.http(via: nil)
        _ = try await proxy.signUp(userId: "traced@example.org", password: password)
        var served: Set<String> = []
        for _ in 0..<8 where served.count < MultiHostSystem.hosts.count {
            let client = SignInTrace.clientContext()
            let login = try await proxy.send("POST", "/v1/sessions", json: ["userId": "traced@example.org", "password": password], headers: [("traceparent", client.traceParent)])
            #expect(login.status == 200)
            let spans = await hosts.traces.spans(ofTrace: client.traceId) { SignInTrace(spans: $0, clientSpanId: client.spanId).isComplete }
            let trace = SignInTrace(spans: spans, clientSpanId: client.spanId)
            #expect(trace.problems.isEmpty, "\(trace.problems)\nspans: \(spans.map { "\($0.host) \($0.service) \($0.name)" })")
            guard let host = trace.gatewayRequest?.host else { continue }
            #expect(MultiHostSystem.hosts.contains(host), "the gateway's span names host \(host)")
            #expect(Set(spans.map(\.host)) == [host], "one sign-in's spans came from hosts \(Set(spans.map(\.host)))")
            #expect(Set(spans.map(\.service)).isSuperset(of: ["konto-gateway", "konto-identity", "konto-profile"]))
            served.insert(host)
        }
        #expect(served == Set(MultiHostSystem.hosts), "traced sign-ins were served by \(served) only")
        #expect(hosts.traces.refusals.isEmpty, "\(hosts.traces.refusals)")
    }

    /// A logout, a password change and a deletion through gateway A: gateway B, whose cache held the session, refuses
    /// it on the very next request. A's answer waits until every gateway's cache has read the change's events
    /// (`notifications.tailBarrier`), so B is asked once, right after A answered, and must say 401 then.
    static func changesSeenAtTheOtherHost(_ hosts: MultiHostSystem) async throws {
        let (a, b) = (try hosts.http(via: "a"), try hosts.http(via: "b"))
        let hitsSample = #"konto_gateway_cache_lookups_total{cache="account",outcome="hit"}"#
        let completeSample = #"konto_gateway_cache_barriers_total{outcome="complete"}"#
        // B serves `token` from its cache (or the check after the change would prove nothing): read until a read is a
        // hit; a read may be refused a place in the cache while the sign-up's own events are still arriving.
        func cachedAtB(_ token: String) async throws {
            try await EndToEndSystem.waitUntil(within: .seconds(10), "B's cache serves the session") {
                let hits = try await b.metric(hitsSample)
                #expect(try await b.send("GET", "/v1/account", token: token).status == 200)
                return try await b.metric(hitsSample) > hits
            }
        }
        let barriersBefore = try await a.metric(completeSample)
        // Logout.
        let (_, token) = try await a.signUp(userId: "logout@example.org", password: password)
        try await cachedAtB(token)
        #expect(try await a.send("DELETE", "/v1/sessions/current", token: token).status == 204)
        #expect(try await b.send("GET", "/v1/account", token: token).status == 401, "a session logged out at A is refused at B on the very next request")

        // Password change: every other session ends.
        let (_, owner) = try await a.signUp(userId: "change@example.org", password: password)
        let other = try #require(try await b.send("POST", "/v1/sessions", json: ["userId": "change@example.org", "password": password]).token)
        try await cachedAtB(other)
        #expect(try await a.send("PUT", "/v1/account/password", json: ["currentPassword": password, "newPassword": password + " new"], token: owner).status == 200)
        #expect(try await b.send("GET", "/v1/account", token: other).status == 401, "a session ended by a password change at A is refused at B on the very next request")
        #expect(try await b.send("GET", "/v1/account", token: owner).status == 200, "the session that changed it goes on at B")

        // Deletion.
        let (_, doomed) = try await a.signUp(userId: "deleted@example.org", password: password)
        try await cachedAtB(doomed)
        #expect(try await a.send("DELETE", "/v1/account", json: ["currentPassword": password], token: doomed).status == 204)
        #expect(try await b.send("GET", "/v1/account", token: doomed).status == 401, "a deleted account's session is refused at B on the very next request")
        // Each of A's three answers waited for a complete barrier (none timed out).
        #expect(try await a.metric(completeSample) - barriersBefore == 3)
        #expect(try await a.metric(#"konto_gateway_cache_barriers_total{outcome="timeout"}"#) == 0)
        let barrierSeconds = try await a.metric("konto_gateway_cache_barrier_duration_seconds_sum")
        print("multi-host: a change at A refused at B on the very next request; A's barriers took \(Int(barrierSeconds * 1000)) ms for 3 changes")
    }

    /// Wrong passwords sent alternately to both gateways are throttled as one count (Identity's, in PostgreSQL).
    static func throttleShared(_ hosts: MultiHostSystem) async throws {
        let userId = "throttled@example.org"
        _ = try await hosts.http(via: "a").signUp(userId: userId, password: password)
        for attempt in 0..<throttleFailures {
            let host = attempt.isMultiple(of: 2) ? "a" : "b"
            let answer = try await hosts.http(via: host).send("POST", "/v1/sessions", json: ["userId": userId, "password": "wrong \(attempt)"])
            #expect(answer.status == 401, "wrong password \(attempt + 1) at \(host): \(answer.status)")
        }
        for host in MultiHostSystem.hosts {
            let answer = try await hosts.http(via: host).send("POST", "/v1/sessions", json: ["userId": userId, "password": password])
            #expect(answer.status == 429, "after \(throttleFailures) failures split over both hosts, host \(host) answers \(answer.status) \(answer.code ?? "")")
        }
    }

    /// Both hosts' Notifications deliver; every event Notifications stored reaches the audit webhook exactly once,
    /// and every reset mail the mailer once.
    static func eventsOnce(_ hosts: MultiHostSystem) async throws {
        let proxy = try hosts.http(via: nil)
        for index in 0..<4 {
            #expect(try await proxy.send("POST", "/v1/password-resets", json: ["userId": "balanced@example.org"], headers: [("X-Forwarded-For", "198.51.100.\(index)")]).status == 202)
        }
        // Mail for several accounts (each sign-up's address confirmation), so the courier group's work, in order per
        // account, can be shared by both hosts.
        for index in 0..<8 {
            _ = try await proxy.signUp(userId: "mail-\(index)@example.org", password: password)
        }
        _ = try await FaultTests.settle(hosts.system)
        let produced = Set(try await hosts.system.strings("SELECT event_id::text FROM notifications.events"))
        try await EndToEndSystem.waitUntil(within: .seconds(30), "every event reaches the audit webhook") {
            let received = try EndToEndSystem.events(receivedBy: hosts.system.audit, secret: EndToEndSystem.auditSecret)
            return produced.isSubset(of: Set(received.compactMap { ($0["id"] as? String)?.lowercased() }))
        }
        let received = try EndToEndSystem.events(receivedBy: hosts.system.audit, secret: EndToEndSystem.auditSecret).compactMap { ($0["id"] as? String)?.lowercased() }
        let twice = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }
        #expect(twice.isEmpty, "\(twice.count) events delivered more than once to the audit webhook")
        let resets = try EndToEndSystem.events(receivedBy: hosts.system.mailer, secret: EndToEndSystem.mailerSecret)
        let resetIds = resets.compactMap { $0["id"] as? String }
        let resetEvents = try await hosts.system.count("SELECT 1 FROM notifications.events WHERE type = 'passwordResetRequested'")
        #expect(resetEvents > 0)
        #expect(Set(resetIds).count == resetIds.count, "a reset mail delivered twice")
        #expect(resetIds.count == resetEvents, "\(resetEvents) resets asked for, the mailer got \(resetIds.count)")

        // Every mail Identity asked for reached the SMTP server, none twice (a Message-ID is its event's id), sent by
        // the couriers of both hosts.
        func asked() async throws -> Set<String> {
            Set(try await hosts.system.strings("SELECT event_id::text FROM notifications.events WHERE type = 'mailRequested'").map { $0.lowercased() })
        }
        func sent() -> [String] {
            hosts.mail.mails.map { $0.messageId.trimmingCharacters(in: CharacterSet(charactersIn: "<>")).split(separator: "@").first.map(String.init) ?? "" }
        }
        // Sent may hold more than what is still asked: the deleted account's events are erased, its mails were sent.
        do {
            try await EndToEndSystem.waitUntil(within: .seconds(60), "every mail asked for is sent") { try await asked().isSubset(of: sent()) }
        } catch {
            Issue.record("not sent: \(try await asked().subtracting(sent()))")
        }
        let messageIds = sent()
        let mails = hosts.mail.mails
        #expect(try await asked().count >= 12)
        #expect(messageIds.count == Set(messageIds).count, "\(messageIds.count - Set(messageIds).count) mails sent twice")
        let senders = Set(mails.compactMap(\.peer))
        let addresses = Set(try MultiHostSystem.hosts.map { try hosts.network.host($0).address })
        #expect(senders == addresses, "mails came from \(senders), the hosts are \(addresses)")
    }
}
