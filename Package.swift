// swift-tools-version:6.2
import PackageDescription

// One settings array for every target, so the whole package is held to the same rules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "konto",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KontoErrors", targets: ["KontoErrors"]),
        .library(name: "KontoModel", targets: ["KontoModel"]),
        .library(name: "KontoRuntime", targets: ["KontoRuntime"]),
        .library(name: "KontoWire", targets: ["KontoWire"]),
        .library(name: "KontoContracts", targets: ["KontoContracts"]),
        .library(name: "KontoTestSupport", targets: ["KontoTestSupport"]),
        .library(name: "KontoTesting", targets: ["KontoTesting"]),
        .library(name: "KontoClient", targets: ["KontoClient"]),
        .library(name: "KontoPostgres", targets: ["KontoPostgres"]),
        .library(name: "KontoEvents", targets: ["KontoEvents"]),
        .library(name: "ProfileService", targets: ["ProfileService"]),
        .library(name: "IdentityService", targets: ["IdentityService"]),
        .executable(name: "konto-profile", targets: ["konto-profile"]),
        .executable(name: "konto-identity", targets: ["konto-identity"]),
        .library(name: "NotificationService", targets: ["NotificationService"]),
        .executable(name: "konto-notifications", targets: ["konto-notifications"]),
        .library(name: "GatewayService", targets: ["GatewayService"]),
        .executable(name: "konto-gateway", targets: ["konto-gateway"]),
        .library(name: "KontoStack", targets: ["KontoStack"]),
        .executable(name: "konto", targets: ["konto"]),
    ],
    dependencies: [
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
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        // MARK: Shared libraries
        // Every error code, declared once, with its family and whether it is retryable: the floor below everything.
        .target(
            name: "KontoErrors",
            path: "Shared/KontoErrors",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoModel",
            dependencies: ["KontoErrors"],
            path: "Shared/KontoModel",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoRuntime",
            dependencies: [
                "KontoErrors",
                "KontoModel",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoRuntime",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoWire",
            dependencies: [
                "KontoErrors",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoWire",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoContracts",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), "KontoErrors", "KontoModel", "KontoWire", .product(name: "NIOCore", package: "swift-nio")],
            path: "Shared/KontoContracts",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoClient",
            dependencies: [
                "KontoModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Shared/KontoClient",
            swiftSettings: swiftSettings
        ),
        // Test support that depends on no service: temporary PostgreSQL, free ports, service processes, running
        // services, contract replay, a webhook receiver.
        .target(
            name: "KontoTestSupport",
            dependencies: [
                "KontoErrors",
                "KontoWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoTestSupport",
            swiftSettings: swiftSettings
        ),
        // The stack kit: withStack, the whole stack in process driven through the client (a downstream project's kit).
        .target(
            name: "KontoTesting",
            dependencies: [
                "KontoTestSupport",
                "KontoStack",
                "KontoClient",
                "KontoModel",
                "KontoPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoTesting",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoPostgres",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoPostgres",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KontoEvents",
            dependencies: [
                "KontoModel",
                "KontoContracts",
                "KontoPostgres",
                "KontoRuntime",
                "KontoWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/KontoEvents",
            swiftSettings: swiftSettings
        ),

        // MARK: Services
        .target(
            name: "ProfileService",
            dependencies: [
                "KontoEvents",
                "KontoModel",
                "KontoPostgres",
                "KontoContracts",
                "KontoRuntime",
                "KontoWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Profile/ProfileService",
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CArgon2",
            path: "Services/Identity/CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        .target(
            name: "IdentityService",
            dependencies: [
                "CArgon2",
                "KontoModel",
                "KontoContracts",
                "KontoEvents",
                "KontoPostgres",
                "KontoRuntime",
                "KontoWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Identity/IdentityService",
            // The built-in list of refused passwords, in the binary (no bundle beside it).
            resources: [.embedInCode("Passwords/common-passwords.txt")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-identity",
            dependencies: [
                "IdentityService",
                "KontoRuntime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Identity/konto-identity",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotificationService",
            dependencies: [
                "KontoEvents",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                "KontoModel",
                "KontoContracts",
                "KontoPostgres",
                "KontoRuntime",
                "KontoWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Notifications/NotificationService",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-notifications",
            dependencies: [
                "NotificationService",
                "KontoRuntime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Notifications/konto-notifications",
            swiftSettings: swiftSettings
        ),
        // The HTTP API. openapi.yaml is the source: swift-openapi-generator derives the server interface from it
        // at build time, so the routes, bodies and responses served cannot drift from the document.
        .target(
            name: "GatewayService",
            dependencies: [
                "KontoModel",
                "KontoContracts",
                "KontoRuntime",
                "KontoWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Gateway/GatewayService",
            // Served as /openapi.json: in the binary, so a slim image needs no resource bundle beside it.
            resources: [.embedInCode("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // MARK: The dev stack (the composition root) and the konto command
        .target(
            name: "KontoStack",
            dependencies: [
                "GatewayService",
                "IdentityService",
                "NotificationService",
                "ProfileService",
                "KontoModel",
                "KontoPostgres",
                "KontoRuntime",
                "KontoWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Services/Stack/KontoStack",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto",
            dependencies: [
                "KontoStack",
                "KontoClient",
                "KontoModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "KontoContracts",
                "KontoWire",
                "KontoPostgres",
                "KontoRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Stack/konto",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-gateway",
            dependencies: [
                "GatewayService",
                "KontoRuntime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Gateway/konto-gateway",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-profile",
            dependencies: [
                "ProfileService",
                "KontoRuntime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Profile/konto-profile",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "KontoModelTests",
            dependencies: ["KontoModel"],
            path: "Tests/KontoModelTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KontoRuntimeTests",
            dependencies: [
                "KontoRuntime",
                "KontoModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/KontoRuntimeTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KontoWireTests",
            dependencies: [
                "KontoWire",
                "KontoTestSupport",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            path: "Tests/KontoWireTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KontoContractsTests",
            dependencies: [
                "KontoContracts",
                "KontoModel",
                "KontoWire",
                "KontoTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/KontoContractsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KontoTestingTests",
            dependencies: [
                "KontoTesting",
                "KontoTestSupport",
                "KontoClient",
                "KontoModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/KontoTestingTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KontoPostgresTests",
            dependencies: [
                "KontoPostgres",
                "KontoTestSupport",
                // EventLoopTaskExecutor, for PostgresConnection.executeIfOpen.
                "KontoWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Only to check that the pool's own errors are still recognised by name (PostgresFailure).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/KontoPostgresTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ProfileServiceTests",
            dependencies: [
                "KontoEvents",
                "ProfileService",
                "KontoModel",
                "KontoPostgres",
                "KontoTestSupport",
                "KontoContracts",
                "KontoRuntime",
                "KontoWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/ProfileServiceTests",
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "IdentityServiceTests",
            dependencies: [
                "IdentityService",
                "KontoContracts",
                "KontoModel",
                "KontoPostgres",
                "KontoTestSupport",
                "KontoWire",
                // The tests' composition root runs a real Profile (and Notifications) next to Identity; the services
                // never import each other.
                "ProfileService",
                "NotificationService",
                "KontoEvents",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/IdentityServiceTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotificationServiceTests",
            dependencies: [
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                "NotificationService",
                "KontoContracts",
                "KontoModel",
                "KontoPostgres",
                "KontoTestSupport",
                "KontoWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/NotificationServiceTests",
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "GatewayServiceTests",
            dependencies: [
                "GatewayService",
                // AccountConfigurationLoader: the console's pages for deploy/accounts.yaml.
                "KontoRuntime",
                "KontoClient",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The tests' composition root runs the real services behind the gateway.
                "IdentityService",
                "ProfileService",
                "NotificationService",
                "KontoContracts",
                "KontoModel",
                "KontoPostgres",
                "KontoTesting",
                "KontoWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/GatewayServiceTests",
            // Run by the tests from the source tree, not bundled.
            exclude: ["Stack/Resources", "Schemathesis/schemathesis.toml"],
            swiftSettings: swiftSettings
        ),

        // The four executables as processes on a temporary PostgreSQL, driven through the gateway with KontoClient.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "KontoClient",
                "KontoContracts",
                "KontoModel",
                "KontoTestSupport",
                "KontoWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/EndToEndTests",
            swiftSettings: swiftSettings
        ),

        // MARK: Benchmarks and fuzzing (executables; not run by `swift test`)
        .executableTarget(
            name: "konto-bench",
            dependencies: [
                "KontoWire",
                "KontoContracts",
                "KontoModel",
                "KontoPostgres",
                "KontoTestSupport",
                "IdentityService",
                "ProfileService",
                "NotificationService",
                "GatewayService",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/Benchmarks",
            swiftSettings: swiftSettings
        ),
        // Built with `-sanitize=fuzzer -DFUZZING` by scripts/fuzz-wire.sh; a plain build links a
        // corpus replayer instead, so `swift build` never needs libFuzzer. See Tests/Fuzz/README.md.
        .target(
            name: "KontoWireFuzzSupport",
            dependencies: [
                "KontoWire",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/Fuzz/Support",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-wire-fuzz",
            dependencies: [
                "KontoWire",
                "KontoWireFuzzSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/Fuzz/WireFuzz",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "konto-wire-client-fuzz",
            dependencies: [
                "KontoWire",
                "KontoWireFuzzSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Tests/Fuzz/WireClientFuzz",
            swiftSettings: swiftSettings
        ),
    ]
)
