import Foundation
import GatewayConsole
import GatewayService
import HTTPTypes
import HummingbirdTesting
import KontoWire
import Logging
import NIOCore
import Testing

/// The gateway's router with every middleware, driven in process by HummingbirdTesting (no socket, no upstream): the
/// answers that need no service. The upstreams point at a port nothing listens on, and nothing here calls them.
@Suite("Gateway router (no upstream)")
struct GatewayRouterTests {
    static func withRouter(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let nowhere = GatewayConfiguration.Upstream(host: "127.0.0.1", port: 1)
        var configuration = GatewayConfiguration(port: 0, secret: WireSecret(GatewayHarness.secret), identity: nowhere, profile: nowhere, notifications: nowhere)
        configuration.maximumBodyBytes = 1_024
        let gateway = try GatewayServer.withConsole(configuration: configuration, logger: Logger(label: "konto.gateway.router-test"))
        try await gateway.application.test(.router) { client in try await body(client) }
    }

    static func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }

    @Test("GET / maps the API for a program and sends a browser to the console; /problems/{code} explains a code or is a 404 problem")
    func root() async throws {
        try await Self.withRouter { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.json(response.body)["console"] as? String == "/account/")
                #expect(Self.json(response.body)["openapi"] as? String == "/openapi.json")
            }
            try await client.execute(uri: "/", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/account/")
            }
            try await client.execute(uri: "/problems/account.throttled", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("account.throttled"))
            }
            try await client.execute(uri: "/problems/no.such-code", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(Self.json(response.body)["code"] as? String == "request.notFound")
            }
        }
    }

    @Test("the document, the schema, liveness and metrics answer without a service")
    func served() async throws {
        try await Self.withRouter { client in
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect((Self.json(response.body)["paths"] as? [String: Any])?["/v1/sessions"] != nil)
            }
            try await client.execute(uri: "/v1/schema", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/health/live", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#"route="/health/live""#))
            }
        }
    }

    @Test("refusals before any service is asked: unknown path 404, method 405, body over the limit 413, another content type 415, malformed JSON 400; each a problem with a request id")
    func refusals() async throws {
        try await Self.withRouter { client in
            let cases: [(String, HTTPRequest.Method, HTTPFields, ByteBuffer?, HTTPResponse.Status, String)] = [
                ("/no/such/route", .get, [:], nil, .notFound, "request.notFound"),
                ("/v1/schema", .delete, [:], nil, .methodNotAllowed, "request.methodNotAllowed"),
                ("/v1/sessions", .post, [.contentType: "application/json"], ByteBuffer(repeating: UInt8(ascii: " "), count: 4_096), .contentTooLarge, "request.bodyTooLarge"),
                ("/v1/sessions", .post, [.contentType: "text/plain"], ByteBuffer(string: "userId=a"), .unsupportedMediaType, "request.unsupportedMediaType"),
                ("/v1/sessions", .post, [.contentType: "application/json"], ByteBuffer(string: #"{"userId": "#), .badRequest, "request.malformed"),
            ]
            for (uri, method, headers, body, status, code) in cases {
                try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
                    #expect(response.status == status, "\(method) \(uri)")
                    #expect(Self.json(response.body)["code"] as? String == code, "\(method) \(uri)")
                    #expect(response.headers[.init("X-Request-ID")!] != nil, "\(method) \(uri)")
                }
            }
        }
    }
}
