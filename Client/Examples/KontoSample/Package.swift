// swift-tools-version:6.1
import PackageDescription

// What an app's package looks like with Konto's client: one dependency, no server package among what it resolves
// (`swift package show-dependencies` here lists swift-openapi-runtime, swift-openapi-urlsession, swift-http-types and
// swift-collections beside the client; a test in Konto's repository holds it to that). An app adds the client the same
// way, by the path of a checkout or the URL of the client's own repository.
let package = Package(
    name: "konto-sample",
    platforms: [.iOS(.v17), .macOS(.v14)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "KontoSample", dependencies: [.product(name: "KontoClient", package: "Client")]),
    ]
)
