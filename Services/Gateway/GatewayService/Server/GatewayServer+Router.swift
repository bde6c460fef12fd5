import Foundation
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoErrors
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import Tracing

extension GatewayServer {
    /// The gateway's router, as hummingbird's template builds one (`buildRouter`): the middlewares, outermost first,
    /// the API's generated handlers, the console's pages, and the few routes of the gateway's own (the map at `/`, the
    /// problem pages, the served document). The executable, the dev stack and the router tests (HummingbirdTesting,
    /// through ``application``) all serve what this builds.
    /// Query parameters whose values a span must not carry: the reset and verification links' tokens, and what a
    /// provider's callback brings (its code, the flow's state and nonce, tokens of a form post).
    static let secretQueryParameters: Set<String> = ["token", "code", "state", "nonce", "id_token", "access_token", "user", "session_state"]

    /// Compact JSON (the runtime pretty-prints by default), keys sorted so answers are stable.
    static let openAPIConfiguration = Configuration(dateTranscoder: GatewayDateTranscoder(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])

    /// The admin listener's router (docs/ADMIN.md): the admin API's routes alone, and its document at
    /// `/admin/v1/openapi.json`. No console, cache or credential limits: every call carries an operator key that
    /// Identity checks before the request is read (``OperatorKeyMiddleware``); the listener has a rate limit of its own.
    static func buildAdminRouter(
        api: GatewayAPI, rateLimits: GatewayRateLimits, metrics: GatewayMetrics, pages makePages: GatewayPagesFactory? = nil,
        configuration: GatewayConfiguration, logger: Logger
    ) throws -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        let pages = try makePages?(GatewayPagesContext(
            operations: GatewayOperations(api: api, rateLimits: rateLimits), adminOperations: GatewayAdminOperations(api: api), configuration: configuration
        ))
        if !(InstrumentationSystem.tracer is NoOpTracer) {
            router.middlewares.add(TracingMiddleware(redactingQueryParameters: Self.secretQueryParameters))
        }
        router.middlewares.add(ResponseHeadersMiddleware())
        router.middlewares.add(MetricsMiddleware(metrics: metrics))
        router.middlewares.add(RequestScopeMiddleware(
            clientAddressHeader: configuration.clientAddressHeader.flatMap { HTTPField.Name($0) },
            trustedProxies: configuration.trustedProxies,
            logger: logger
        ))
        router.middlewares.add(ProblemMiddleware(
            htmlPages: pages.map { pages in (pages.basePath, { problem in pages.refusalPage(problem) }) }, servesPath: { OpenAPIDocument.isAdminPath($0) }
        ))
        router.middlewares.add(RateLimitMiddleware(rateLimits: rateLimits))
        // The key before the body: an unauthenticated caller gets 401 whatever it sent.
        router.middlewares.add(OperatorKeyMiddleware(upstreams: api.upstreams))
        router.middlewares.add(BodyLimitMiddleware(maximumBodyBytes: configuration.maximumBodyBytes, maximumNDJSONBytes: configuration.maximumImportBytes))
        // The admin console, beside the admin API on its listener alone.
        pages?.register(on: router)
        try api.registerHandlers(
            on: PathFilteringTransport(base: router) { OpenAPIDocument.isAdminPath($0) },
            configuration: Self.openAPIConfiguration,
            middlewares: [AbsentBodyMiddleware()]
        )
        let document = OpenAPIDocument.served(for: configuration.accounts, listener: .admin)
        router.get("/admin/v1/openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: document)))
        }
        return router
    }

    static func buildRouter(
        api: GatewayAPI, rateLimits: GatewayRateLimits, cache: AccountCache, metrics: GatewayMetrics, pages makePages: GatewayPagesFactory?,
        configuration: GatewayConfiguration, logger: Logger
    ) throws -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        if !(InstrumentationSystem.tracer is NoOpTracer) {
            // A server span per request (hummingbird's), continuing a client's `traceparent`; the wire calls made for
            // it are its children. Only with a tracer installed (ServiceTracing): otherwise every request would pay
            // for a span nobody exports. Query values that are secrets (links' tokens, providers' codes) are redacted.
            router.middlewares.add(TracingMiddleware(redactingQueryParameters: Self.secretQueryParameters))
        }
        router.middlewares.add(ResponseHeadersMiddleware())
        if !configuration.corsOrigins.isEmpty {
            router.middlewares.add(CORSPolicy(origins: configuration.corsOrigins.contains("*") ? nil : Set(configuration.corsOrigins)))
        }
        let pages = try makePages?(GatewayPagesContext(
            operations: GatewayOperations(api: api, rateLimits: rateLimits), adminOperations: GatewayAdminOperations(api: api), configuration: configuration
        ))
        // Outermost first: every answer is counted, carries its request id, and every failure inside becomes one.
        router.middlewares.add(MetricsMiddleware(metrics: metrics))
        router.middlewares.add(RequestScopeMiddleware(
            clientAddressHeader: configuration.clientAddressHeader.flatMap { HTTPField.Name($0) },
            trustedProxies: configuration.trustedProxies,
            logger: logger
        ))
        router.middlewares.add(ProblemMiddleware(htmlPages: pages.map { pages in (pages.basePath, { problem in pages.refusalPage(problem) }) }))
        router.middlewares.add(QuotedHeadersMiddleware())
        router.middlewares.add(RateLimitMiddleware(rateLimits: rateLimits))
        router.middlewares.add(BodyLimitMiddleware(maximumBodyBytes: configuration.maximumBodyBytes))
        router.middlewares.add(CachedAccountMiddleware(cache: cache, metrics: metrics))
        // Compact JSON (the runtime pretty-prints by default), keys sorted so answers are stable.
        // The admin API's routes are never registered here: they live on the admin listener alone.
        try api.registerHandlers(
            on: PathFilteringTransport(base: router) { !OpenAPIDocument.isAdminPath($0) },
            configuration: Self.openAPIConfiguration,
            middlewares: [CredentialRateLimitMiddleware(limits: rateLimits), AbsentBodyMiddleware()]
        )
        pages?.register(on: router)
        let consolePath = pages == nil ? nil : configuration.consolePath
        registerOpenID(on: router, api: api, rateLimits: rateLimits, consolePath: consolePath)
        // The root says where things are: a browser goes to the console, anything else gets the map as JSON.
        var places = ["openapi": "/openapi.json", "problems": "/problems/{code}"]
        places["console"] = consolePath.map { $0 + "/" }
        let map = try JSONSerialization.data(withJSONObject: places, options: [.sortedKeys, .withoutEscapingSlashes])
        router.get("/") { request, _ in
            if let consolePath, request.headers[.accept]?.contains("text/html") == true {
                return Response(status: .seeOther, headers: [.location: consolePath + "/"])
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: map)))
        }
        // What a problem's `type` names.
        router.get("/problems/:code") { _, context in
            guard let html = context.parameters.get("code").flatMap({ ProblemTypePage.html(for: KontoErrorCode(rawValue: $0)) }) else {
                throw GatewayProblem(status: .notFound, code: .requestNotFound, detail: "No such problem code.")
            }
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        }
        let document = OpenAPIDocument.served(for: configuration.accounts)
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: document))
            )
        }
        return router
    }
}
