import ArgumentParser

/// One executable for every Konto benchmark; each area is a subcommand.
@main
struct KontoBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "konto-bench",
        abstract: "Konto benchmarks (run in release builds on loopback).",
        subcommands: [CodecBenchmark.self, WireBenchmark.self, WireBenchServer.self, ProfileBenchmark.self, ProfileBenchServer.self, SessionBenchmark.self, LoginBenchmark.self, EventsBenchmark.self, GatewayBenchmark.self, StackBenchmark.self, MailBenchmark.self, MultiHostBenchmark.self, AdminBenchmark.self, OpenIDBenchmark.self]
    )
}
