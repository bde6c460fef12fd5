// swift-tools-version:6.2
// Only for scripts/generate-openapi.sh: swift-openapi-generator's command, pinned, built apart from Konto's package so
// that building Konto never builds the generator (its OpenAPIKit, Yams and ArgumentParser host builds and the build
// plugin's run before two targets cost a fresh clone's build about two minutes).
import PackageDescription

let package = Package(
    name: "openapi-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3"),
    ]
)
