// swift-tools-version:6.1
import PackageDescription

// Konto's Swift client for apps: what an iOS or macOS app adds with SwiftPM. It stands apart from the server package
// (the repository's root) so that adding it resolves no server package: only swift-openapi-runtime, its URLSession
// transport and swift-http-types. The server package depends on this one by path (its targets share the model).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "konto-client",
    platforms: [.iOS(.v17), .macOS(.v14)],
    products: [
        .library(name: "KontoClient", targets: ["KontoClient"]),
        .library(name: "KontoModel", targets: ["KontoModel"]),
        .library(name: "KontoErrors", targets: ["KontoErrors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // Every error code, declared once, with its family and whether it is retryable: the floor below everything.
        .target(name: "KontoErrors"),
        // Accounts as SpeziAccount models them: typed keys, details, the configuration's requirements.
        .target(name: "KontoModel", dependencies: ["KontoErrors"]),
        .target(
            name: "KontoClient",
            dependencies: [
                "KontoModel",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            // The HTTP exchanges in Generated/ come from the gateway's openapi.yaml (linked here), as the server's do
            // (scripts/generate-openapi.sh in the repository).
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
