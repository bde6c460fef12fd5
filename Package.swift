// swift-tools-version:6.2
import PackageDescription

// One settings array for every target (applied at the end), so the whole package is held to the same rules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Products several targets use, each named once.
extension Target.Dependency {
    static let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
    static let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
    static let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let postgresNIO = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
    static let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
    static let nioHTTP1 = Target.Dependency.product(name: "NIOHTTP1", package: "swift-nio")
    static let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
    static let asyncHTTPClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
    static let yams = Target.Dependency.product(name: "Yams", package: "Yams")
    static let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
    static let unixSignals = Target.Dependency.product(name: "UnixSignals", package: "swift-service-lifecycle")
    static let nioEmbedded = Target.Dependency.product(name: "NIOEmbedded", package: "swift-nio")
    static let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
    static let openAPIRuntime = Target.Dependency.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
    static let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
    static let tracing = Target.Dependency.product(name: "Tracing", package: "swift-distributed-tracing")
    static let kontoErrors = Target.Dependency.product(name: "KontoErrors", package: "Client")
    static let kontoModel = Target.Dependency.product(name: "KontoModel", package: "Client")
    static let kontoClient = Target.Dependency.product(name: "KontoClient", package: "Client")
}

/// What a service library (Identity, Profile, Notifications) stands on: the shared floors and the runtime every
/// service runs on (docs/ARCHITECTURE.md, "Floors").
let serviceFoundation: [Target.Dependency] = [
    .kontoModel, "KontoContracts", "KontoEvents", "KontoPostgres", "KontoRuntime", "KontoWire",
    .postgresNIO, .logging, .nioCore, .nioPosix, .serviceLifecycle, .tracing,
]

/// The console's pages (Mustache), stylesheet, script and icon: resources compiled into GatewayConsole.
let consoleResources = [
    "applications", "categories", "codes", "consent", "continue", "csrf", "done", "edit", "endSession", "export", "externalSignup", "factors", "field", "form", "identities", "layout",
    "mail", "messages", "overview", "passkey", "passkeyPage", "problem", "sessions", "setup", "signup", "totp", "verify",
    // The admin console's (on the admin listener).
    "adminAccount", "adminAccountForm", "adminAccounts", "adminAudit", "adminClients", "adminDeliveries", "adminDone", "adminImport", "adminLayout",
    "adminProblem", "adminSignIn", "adminWebhooks",
].map { "Resources/Templates/\($0).mustache" } + ["console.css", "console.js", "icon.svg"].map { "Resources/Assets/\($0)" }

/// The courier's built-in templates, `<message>.<part>`.
let mailTemplates = [
    "accessSecured.html", "accessSecured.subject", "accessSecured.text", "emailChanged.html", "emailChanged.subject",
    "emailChanged.text", "factorAdded.html", "factorAdded.subject", "factorAdded.text", "factorRemoved.html",
    "factorRemoved.subject", "factorRemoved.text", "identityLinked.html", "identityLinked.subject",
    "identityLinked.text", "newSignIn.html", "newSignIn.subject", "newSignIn.text", "passwordChanged.html",
    "passwordChanged.subject", "passwordChanged.text", "passwordReset.html", "passwordReset.subject",
    "passwordReset.text", "recoveryCodeUsed.html", "recoveryCodeUsed.subject", "recoveryCodeUsed.text",
    "secondFactorFailures.html", "secondFactorFailures.subject", "secondFactorFailures.text",
    "secondFactorLocked.html", "secondFactorLocked.subject", "secondFactorLocked.text", "signInCode.html",
    "signInCode.subject", "signInCode.text", "verifyEmail.html", "verifyEmail.subject", "verifyEmail.text",
]

let package = Package(
    name: "konto",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KontoRuntime", targets: ["KontoRuntime"]),
        .library(name: "KontoWire", targets: ["KontoWire"]),
        .library(name: "KontoContracts", targets: ["KontoContracts"]),
        .library(name: "KontoTestSupport", targets: ["KontoTestSupport"]),
        .library(name: "KontoTesting", targets: ["KontoTesting"]),
        .library(name: "KontoClientAsyncHTTPClient", targets: ["KontoClientAsyncHTTPClient"]),
        .library(name: "KontoQRCode", targets: ["KontoQRCode"]),
        .library(name: "KontoWebAuthn", targets: ["KontoWebAuthn"]),
        .library(name: "KontoMail", targets: ["KontoMail"]),
        .library(name: "KontoPostgres", targets: ["KontoPostgres"]),
        .library(name: "KontoEvents", targets: ["KontoEvents"]),
        .library(name: "ProfileService", targets: ["ProfileService"]),
        .library(name: "IdentityService", targets: ["IdentityService"]),
        .executable(name: "konto-profile", targets: ["konto-profile"]),
        .executable(name: "konto-identity", targets: ["konto-identity"]),
        .library(name: "NotificationService", targets: ["NotificationService"]),
        .executable(name: "konto-notifications", targets: ["konto-notifications"]),
        .library(name: "GatewayService", targets: ["GatewayService"]),
        .library(name: "GatewayConsole", targets: ["GatewayConsole"]),
        .executable(name: "konto-gateway", targets: ["konto-gateway"]),
        .library(name: "KontoStack", targets: ["KontoStack"]),
        .executable(name: "konto", targets: ["konto"]),
    ],
    dependencies: [
        // The client, the model and the error codes: a package of their own, which apps add without this one's.
        .package(path: "Client"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Only the OTLP/HTTP exporter: the gRPC one's packages cost minutes of every CI build (docs/CONFIGURATION.md, "Tracing").
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // MARK: Shared libraries
        .target(
            name: "KontoRuntime",
            dependencies: [
                .kontoErrors, .kontoModel, "KontoPostgres", "KontoWire", .yams, .logging, .serviceLifecycle, .unixSignals,
                // Where settings come from (the environment, an environment file, a secrets directory) and in which
                // order: swift-configuration's providers behind one ConfigReader per service.
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                // Traces over OTLP/HTTP where OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/CONFIGURATION.md, "Tracing").
                .product(name: "OTel", package: "swift-otel"), .tracing,
            ],
            path: "Shared/KontoRuntime"
        ),
        .target(
            name: "KontoWire",
            dependencies: [.kontoErrors, .nioCore, .nioPosix, .nioSSL, .crypto, .logging, .serviceLifecycle, .tracing],
            path: "Shared/KontoWire"
        ),
        .target(
            name: "KontoContracts",
            dependencies: [.crypto, .kontoErrors, .kontoModel, "KontoWire", .nioCore],
            path: "Shared/KontoContracts"
        ),
        // KontoClient (the Client package, which apps add) over async-http-client, for servers and Konto's own tools:
        // event streams on Linux need it (URLSession there buffers a whole answer).
        .target(
            name: "KontoClientAsyncHTTPClient",
            dependencies: [
                .kontoClient, .kontoModel, .asyncHTTPClient, .nioCore, .openAPIRuntime,
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ],
            path: "Shared/KontoClientAsyncHTTPClient"
        ),
        // QR codes of otpauth URIs, for the console (SVG) and konto (the terminal); no dependencies.
        .target(name: "KontoQRCode", path: "Shared/KontoQRCode"),
        // WebAuthn (passkeys) for a relying party: CBOR, COSE keys, authenticator data, registration and assertion.
        // Konto's own because no WebAuthn package is in the mirror; shaped so swift-server/swift-webauthn could
        // replace it (docs/IDENTITY.md, "Passkeys").
        .target(
            name: "KontoWebAuthn",
            dependencies: [
                .crypto, .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
            ],
            path: "Shared/KontoWebAuthn"
        ),
        // A service's metrics at GET /metrics on a listener of its own (Identity's and Notifications'): the registry is
        // swift-prometheus's, the listener hummingbird's.
        .target(
            name: "KontoMetrics",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Prometheus", package: "swift-prometheus"),
                .logging, .nioCore, .serviceLifecycle,
            ],
            path: "Shared/KontoMetrics"
        ),
        // Mail over SMTP: addresses, MIME, the SMTP client's state machine and its NIO client. Konto's own because no
        // SMTP package is in the mirror; shaped so sersoft-gmbh/swift-smtp could replace it (docs/NOTIFICATIONS.md).
        .target(
            name: "KontoMail",
            dependencies: [.kontoModel, .nioCore, .nioPosix, .nioSSL, .product(name: "NIOTLS", package: "swift-nio")],
            path: "Shared/KontoMail"
        ),
        // Test support that depends on no service: temporary PostgreSQL, free ports, service processes, running
        // services, contract replay, a webhook receiver.
        .target(
            name: "KontoTestSupport",
            dependencies: [
                .kontoErrors, .kontoModel, "KontoWire", "KontoContracts", .postgresNIO, .nioCore, .nioPosix, .nioHTTP1, .logging,
                .serviceLifecycle, .crypto,
            ],
            path: "Shared/KontoTestSupport"
        ),
        // The stack kit: withStack, the whole stack in process driven through the client (a downstream project's kit).
        .target(
            name: "KontoTesting",
            dependencies: [
                "KontoTestSupport", "KontoStack", .kontoClient, "KontoClientAsyncHTTPClient", .kontoModel, "KontoPostgres", .logging,
                .serviceLifecycle,
            ],
            path: "Shared/KontoTesting"
        ),
        .target(
            name: "KontoPostgres",
            dependencies: [.postgresNIO, .nioCore, .nioPosix, .nioSSL, .logging, .serviceLifecycle, .tracing],
            path: "Shared/KontoPostgres"
        ),
        .target(
            name: "KontoEvents",
            dependencies: [
                .kontoModel, "KontoContracts", "KontoPostgres", "KontoRuntime", "KontoWire", .logging, .postgresNIO,
                .serviceLifecycle,
            ],
            path: "Shared/KontoEvents"
        ),

        // MARK: Services
        .target(
            name: "ProfileService",
            dependencies: serviceFoundation,
            path: "Services/Profile/ProfileService"
        ),
        .systemLibrary(
            name: "CArgon2",
            path: "Services/Identity/CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        .systemLibrary(
            name: "CCrypt",
            path: "Services/Identity/CCrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        .target(
            name: "IdentityService",
            dependencies: serviceFoundation + [
                "CArgon2", "CCrypt", "KontoWebAuthn", .crypto,
                // The audit chain's head at /metrics (docs/ADMIN.md, "Tamper evidence").
                "KontoMetrics", .product(name: "Prometheus", package: "swift-prometheus"),
                // RFC 4226/6238 one-time passwords for the TOTP second factor.
                .product(name: "HummingbirdOTP", package: "hummingbird-auth"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                // RSA (RS256, PS256) passkey signatures.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // External identity providers: ID tokens verified against their JWKS, Apple's client secret signed.
                .product(name: "JWTKit", package: "jwt-kit"),
                // Discovery, keys, token exchange and revocation at the providers.
                .asyncHTTPClient,
            ],
            path: "Services/Identity/IdentityService",
            // The built-in list of refused passwords, in the binary (no bundle beside it).
            resources: [.embedInCode("Passwords/common-passwords.txt")]
        ),
        .executableTarget(
            name: "konto-identity",
            dependencies: ["IdentityService", "KontoRuntime", .logging],
            path: "Services/Identity/konto-identity"
        ),
        .target(
            name: "NotificationService",
            dependencies: serviceFoundation + [
                "KontoMail", .asyncHTTPClient, .crypto, .yams, .nioSSL, .product(name: "NIOTLS", package: "swift-nio"),
                // The courier's templates (the console's too).
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                // The courier's counters at /metrics (the gateway serves its own beside its API).
                .product(name: "Prometheus", package: "swift-prometheus"), "KontoMetrics",
            ],
            path: "Services/Notifications/NotificationService",
            // The built-in mail templates, compiled in; each named as an operator's override is (`KONTO_MAIL_TEMPLATES`).
            resources: mailTemplates.map { .embedInCode("Resources/MailTemplates/\($0).mustache") }
        ),
        .executableTarget(
            name: "konto-notifications",
            dependencies: ["NotificationService", "KontoRuntime", .logging],
            path: "Services/Notifications/konto-notifications"
        ),
        // The HTTP API. openapi.yaml is the source: swift-openapi-generator derives the server interface from it
        // (committed in Generated/, checked against the document by OpenAPIGeneratedCodeTests), so the routes, bodies
        // and responses served cannot drift from the document.
        .target(
            name: "GatewayService",
            dependencies: [
                .kontoModel, "KontoContracts", "KontoRuntime", "KontoWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .openAPIRuntime,
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .httpTypes, .crypto, .yams, .logging, .nioCore, .nioPosix, .nioHTTP1, .serviceLifecycle, .tracing,
            ],
            path: "Services/Gateway/GatewayService",
            // Served as /openapi.json: in the binary, so a slim image needs no resource bundle beside it.
            // Generated/ is swift-openapi-generator's server for it, committed (scripts/generate-openapi.sh).
            exclude: ["openapi-generator-config.yaml"],
            resources: [.embedInCode("openapi.yaml")]
        ),
        // The web account console: server-rendered pages over the gateway's own operations, called in process.
        .target(
            name: "GatewayConsole",
            dependencies: [
                "GatewayService", .kontoModel, "KontoQRCode", "KontoWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .openAPIRuntime, .httpTypes, .crypto, .nioCore,
            ],
            path: "Services/Gateway/GatewayConsole",
            // Compiled in (no files to ship beside the binary, a read-only root filesystem is fine).
            resources: consoleResources.map { .embedInCode($0) }
        ),
        // MARK: The dev stack (the composition root) and the konto command
        .target(
            name: "KontoStack",
            dependencies: [
                "GatewayService", "GatewayConsole", "IdentityService", "NotificationService", "ProfileService", "KontoMail", .kontoModel,
                "KontoPostgres", "KontoRuntime", "KontoWire", .crypto, .logging, .serviceLifecycle, .unixSignals,
                .nioCore,
            ],
            path: "Services/Stack/KontoStack"
        ),
        .executableTarget(
            name: "konto",
            dependencies: [
                "KontoStack", .kontoClient, "KontoClientAsyncHTTPClient", .kontoModel, "KontoQRCode", .asyncHTTPClient, .nioCore, .nioHTTP1, "KontoContracts",
                "KontoWire", "KontoPostgres", "KontoRuntime", .argumentParser, .logging, "IdentityService", .postgresNIO, .nioPosix,
            ],
            path: "Services/Stack/konto"
        ),
        .executableTarget(
            name: "konto-gateway",
            dependencies: ["GatewayService", "GatewayConsole", "KontoRuntime", .logging],
            path: "Services/Gateway/konto-gateway"
        ),
        .executableTarget(
            name: "konto-profile",
            dependencies: ["ProfileService", "KontoRuntime", .logging],
            path: "Services/Profile/konto-profile"
        ),

        // MARK: Tests
        .testTarget(
            name: "KontoQRCodeTests",
            dependencies: ["KontoQRCode", "KontoTestSupport"],
            path: "Tests/KontoQRCodeTests"
        ),
        .testTarget(
            name: "KontoWebAuthnTests",
            dependencies: ["KontoWebAuthn", "KontoTestSupport", .crypto],
            path: "Tests/KontoWebAuthnTests"
        ),
        .testTarget(
            name: "KontoMailTests",
            dependencies: ["KontoMail", "KontoTestSupport", .nioCore, .nioEmbedded, .nioPosix, .nioSSL],
            path: "Tests/KontoMailTests"
        ),
        .testTarget(
            name: "KontoModelTests",
            dependencies: [.kontoModel],
            path: "Tests/KontoModelTests"
        ),
        .testTarget(
            name: "KontoRuntimeTests",
            dependencies: [
                "KontoRuntime", .kontoModel, "KontoPostgres", "KontoWire", .logging, .serviceLifecycle,
                .product(name: "Configuration", package: "swift-configuration"), .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Tests/KontoRuntimeTests"
        ),
        .testTarget(
            name: "KontoWireTests",
            dependencies: [
                "KontoWire", "KontoTestSupport", .nioEmbedded, .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            path: "Tests/KontoWireTests"
        ),
        .testTarget(
            name: "KontoContractsTests",
            dependencies: ["KontoContracts", .kontoModel, "KontoWire", "KontoTestSupport", .nioCore, .logging],
            path: "Tests/KontoContractsTests"
        ),
        .testTarget(
            name: "KontoTestingTests",
            dependencies: ["KontoTesting", "KontoTestSupport", .kontoClient, "KontoClientAsyncHTTPClient", .kontoModel, .nioCore, .postgresNIO],
            path: "Tests/KontoTestingTests"
        ),
        .testTarget(
            name: "KontoPostgresTests",
            dependencies: [
                "KontoPostgres",
                "KontoTestSupport",
                // EventLoopTaskExecutor, for PostgresConnection.executeIfOpen.
                "KontoWire",
                .postgresNIO,
                // Only to check that the pool's own errors are still recognised by name (PostgresFailure).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .nioSSL,
                .logging,
                .nioCore,
                .nioPosix,
            ],
            path: "Tests/KontoPostgresTests"
        ),
        .testTarget(
            name: "ProfileServiceTests",
            dependencies: [
                "KontoEvents", "ProfileService", .kontoModel, "KontoPostgres", "KontoTestSupport", "KontoContracts",
                "KontoRuntime", "KontoWire", .postgresNIO, .logging, .nioCore, .nioPosix,
            ],
            path: "Tests/ProfileServiceTests"
        ),

        .testTarget(
            name: "IdentityServiceTests",
            dependencies: [
                "IdentityService",
                "KontoContracts",
                .kontoModel,
                "KontoPostgres",
                "KontoTestSupport",
                "KontoWire",
                // The tests' composition root runs a real Profile (and Notifications) next to Identity; the services
                // never import each other.
                "ProfileService",
                "NotificationService",
                "KontoEvents",
                .logging,
                .nioCore,
                .nioPosix,
                .postgresNIO,
                .serviceLifecycle,
                // The OpenID Provider's keys: made with Crypto, their tokens checked by jwt-kit, which no one here wrote.
                .crypto,
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                // The process's /metrics, read as a scraper reads it.
                .asyncHTTPClient, .nioHTTP1,
            ],
            path: "Tests/IdentityServiceTests"
        ),
        .testTarget(
            name: "NotificationServiceTests",
            dependencies: [
                .nioHTTP1, .nioPosix, "NotificationService", "KontoContracts", "KontoMail", .kontoModel, "KontoPostgres",
                "KontoTestSupport", "KontoWire", "KontoRuntime", .logging, .nioCore, .postgresNIO, .serviceLifecycle, .asyncHTTPClient,
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            path: "Tests/NotificationServiceTests"
        ),

        .testTarget(
            name: "GatewayServiceTests",
            dependencies: [
                "GatewayService",
                "GatewayConsole",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // AccountConfigurationLoader: the console's pages for deploy/accounts.yaml.
                "KontoRuntime",
                .kontoClient, "KontoClientAsyncHTTPClient",
                .httpTypes,
                .openAPIRuntime,
                // The tests' composition root runs the real services behind the gateway.
                "IdentityService",
                "ProfileService",
                "NotificationService",
                "KontoContracts",
                .kontoModel,
                "KontoPostgres",
                "KontoTesting",
                "KontoWire",
                .asyncHTTPClient,
                .crypto,
                .yams,
                .logging,
                .nioCore,
                .nioHTTP1,
                .nioPosix,
                .serviceLifecycle,
            ],
            path: "Tests/GatewayServiceTests",
            // Run by the tests from the source tree, not bundled.
            exclude: ["Stack/Resources", "Schemathesis/schemathesis.toml"]
        ),

        // The four executables as processes on a temporary PostgreSQL, driven through the gateway with KontoClient.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                .kontoClient, "KontoClientAsyncHTTPClient", "KontoContracts", .kontoModel, "KontoTestSupport", "KontoWire", .asyncHTTPClient,
                .logging, .nioCore, .nioHTTP1, .postgresNIO,
            ],
            path: "Tests/EndToEndTests"
        ),

        // MARK: Benchmarks and fuzzing (executables; not run by `swift test`)
        .executableTarget(
            name: "konto-bench",
            dependencies: [
                "KontoWire", "KontoContracts", "KontoMail", .kontoModel, "KontoPostgres", "KontoTestSupport", "KontoWebAuthn", "IdentityService",
                "ProfileService", "NotificationService", "GatewayService", .postgresNIO, .argumentParser, .nioCore,
                .nioPosix, .logging, .serviceLifecycle, .unixSignals, .nioSSL, .crypto,
            ],
            path: "Tests/Benchmarks"
        ),
        // Built with `-sanitize=fuzzer -DFUZZING` by scripts/fuzz-wire.sh; a plain build links a
        // corpus replayer instead, so `swift build` never needs libFuzzer. See Tests/Fuzz/README.md.
        .target(
            name: "KontoWireFuzzSupport",
            dependencies: ["KontoWire", .nioCore],
            path: "Tests/Fuzz/Support"
        ),
        .executableTarget(
            name: "konto-wire-fuzz",
            dependencies: ["KontoWire", "KontoWireFuzzSupport", .logging, .nioCore],
            path: "Tests/Fuzz/WireFuzz"
        ),
        .executableTarget(
            name: "konto-wire-client-fuzz",
            dependencies: ["KontoWire", "KontoWireFuzzSupport", .nioCore, .nioEmbedded],
            path: "Tests/Fuzz/WireClientFuzz"
        ),
        .executableTarget(
            name: "konto-passkey-fuzz",
            dependencies: ["KontoWebAuthn", "KontoWireFuzzSupport"],
            path: "Tests/Fuzz/PasskeyFuzz"
        ),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = swiftSettings
}
