#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The plain (non-libFuzzer) build of a fuzz target: replays corpus files or crash reproducers
/// through the same function, or writes the generated seed corpus.
///
///     konto-wire-client-fuzz FILE|DIR...          replay
///     konto-wire-client-fuzz --write-seeds DIR    write the seeds (named <name>.bin)
public enum FuzzReplay {
    public static func main(
        arguments: [String],
        seeds: () -> [(name: String, bytes: [UInt8])],
        body: (UnsafeRawBufferPointer) -> Void
    ) throws {
        if arguments.first == "--write-seeds", arguments.count == 2 {
            let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let all = seeds()
            for seed in all {
                // Every seed must itself run clean before it is written.
                seed.bytes.withUnsafeBytes { body($0) }
                try Data(seed.bytes).write(to: directory.appendingPathComponent("\(seed.name).bin"))
            }
            print("wrote \(all.count) seed(s) to \(directory.path)")
            return
        }
        var count = 0
        for path in arguments {
            for file in try Self.files(at: path) {
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                data.withUnsafeBytes { body($0) }
                count += 1
            }
        }
        print("replayed \(count) input(s) without a finding")
    }

    /// A directory's files (sorted, hidden ones skipped), or the path itself.
    private static func files(at path: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [path] }
        return names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
    }
}
