import Foundation
import KontoTestSupport
import Testing

/// Traces over OTLP/HTTP from the four service processes, received and decoded by OpenTelemetry's own protobuf code
/// (``OTLPReceiver``): what a sign-in's trace holds, that a client's `traceparent` is continued and a malformed one is
/// not, that no span carries a secret, and that a receiver that is down costs the services nothing.
@Suite("Traces over OTLP, over the real services")
struct TracingTests {
    static func environment(_ receiver: OTLPReceiver) -> [String: String] {
        // A short batch delay so the test need not wait the default 5 s for each export.
        ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"]
    }

    @Test("a sign-in is one trace: the gateway's request under the client's span, identity.login and profile.load each under the call that made it, storage spans in both; no span holds a password, token or query secret")
    func signInTrace() async throws {
        let receiver = try await OTLPReceiver.start()
        do {
            try await EndToEndSystem.with(environment: Self.environment(receiver)) { system in
                let http = RawHTTP(system: system)
                let password = "trace-password-\(UUID().uuidString.prefix(8))"
                let userId = "traced-\(UUID().uuidString.prefix(8).lowercased())@example.org"
                let signUp = try await http.signUp(userId: userId, password: password)
                let client = SignInTrace.clientContext()
                let login = try await http.send("POST", "/v1/sessions", json: ["userId": userId, "password": password], headers: [("traceparent", client.traceParent)])
                #expect(login.status == 200)
                let spans = await receiver.spans(ofTrace: client.traceId) { SignInTrace(spans: $0, clientSpanId: client.spanId).isComplete }
                let trace = SignInTrace(spans: spans, clientSpanId: client.spanId)
                #expect(trace.problems.isEmpty, "\(trace.problems)\nspans: \(spans.map { "\($0.service) \($0.name) \($0.spanId)<-\($0.parentSpanId)" })")
                #expect(trace.gatewayRequest?.attributes["http.response.status_code"] == "200")

                // A reset link's token in the query is redacted in the console page's span.
                let secretToken = "link-token-\(UUID().uuidString)"
                let page = SignInTrace.clientContext()
                _ = try await http.send("GET", "/account/reset/confirm?token=\(secretToken)", headers: [("traceparent", page.traceParent)])
                let pageSpans = await receiver.spans(ofTrace: page.traceId) { !$0.isEmpty }
                #expect(pageSpans.first?.attributes["url.query"] == "token=REDACTED", "\(pageSpans)")

                // A malformed traceparent is not continued: the request starts a trace of its own.
                let before = Set(receiver.spans.map(\.traceId))
                let bogus = "00-\(String(repeating: "z", count: 32))-\(SignInTrace.hex(8))-01"
                #expect(try await http.send("GET", "/v1/account", token: signUp.token, headers: [("traceparent", bogus)]).status == 200)
                try await EndToEndSystem.waitUntil(within: .seconds(20), "the request with a malformed traceparent is traced") {
                    receiver.spans.contains { !before.contains($0.traceId) && $0.service == "konto-gateway" && $0.name == "/v1/account" && $0.parentSpanId.isEmpty }
                }

                let all = receiver.spans
                let leaked = all.filter { span in span.attributes.values.contains { $0.contains(password) || $0.contains(signUp.token) || $0.contains(secretToken) } }
                #expect(leaked.isEmpty, "spans holding a secret: \(leaked)")
                #expect(receiver.refusals.isEmpty, "\(receiver.refusals)")
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    @Test("with the receiver down, sign-up and sign-in work as before and a service stops within its grace: spans that cannot be exported are dropped")
    func receiverDown() async throws {
        let port = try FreePort.loopback()
        try await EndToEndSystem.with(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)", "OTEL_BSP_SCHEDULE_DELAY": "100"]) { system in
            let http = RawHTTP(system: system)
            let userId = "untraced-\(UUID().uuidString.prefix(8).lowercased())@example.org"
            let signUp = try await http.signUp(userId: userId, password: "receiver-down-password")
            for _ in 0..<5 {
                #expect(try await http.send("POST", "/v1/sessions", json: ["userId": userId, "password": "receiver-down-password"]).status == 200)
                #expect(try await http.send("GET", "/v1/account", token: signUp.token).status == 200)
            }
            #expect(try await system.readiness() == 200)
            // And stopping is not held up by spans it cannot export: within compose's 15 s grace, with room.
            let profile = try #require(system.stack.process("konto-profile"))
            let started = ContinuousClock.now
            profile.signal(SIGTERM)
            #expect(await profile.waitForExit(timeout: .seconds(15)) == 0)
            #expect(ContinuousClock.now - started < .seconds(8), "stopping took \(ContinuousClock.now - started)")
        }
    }

    @Test("an endpoint that is not an http(s) URL, or a protocol not built in, stops a service with exit code 2 naming the variable", arguments: [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://collector/v1/traces"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
    ])
    func badSettingsRefused(variable: String, value: String) async throws {
        var environment = ["KONTO_LOG_LEVEL": "error", variable: value]
        if variable.hasSuffix("PROTOCOL") { environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318" }
        let profile = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
        defer { profile.signal(SIGKILL) }
        let status = await profile.waitForExit(timeout: .seconds(30))
        #expect(status == 2, "\(profile.output)")
        #expect(profile.output.contains(variable), "\(profile.output)")
    }
}
