import Foundation
import KontoTestSupport
import Testing

/// deploy/kubernetes/ judged by tools no one here wrote (deploy/kubernetes/check.sh): both overlays render with
/// kubectl's kustomize, pass kubernetes-validate in strict mode and checkov with no failed check (a skip only as an
/// annotation in the manifest, with its reason). scripts/test.sh installs both judges and names them in
/// KONTO_KUBERNETES_VALIDATE and KONTO_CHECKOV; without them (or kubectl) the tests are not run, except on CI.
@Suite("Kubernetes manifests")
struct KubernetesManifestsTests {
    static let environment = ProcessInfo.processInfo.environment
    static let judges = environment["KONTO_KUBERNETES_VALIDATE"] != nil && environment["KONTO_CHECKOV"] != nil
    static let onCI = environment["CI"] == "true"

    @Test("both overlays render and pass kubernetes-validate (strict) and checkov", .enabled(if: judges || onCI, "scripts/test.sh names the judges"))
    func overlaysPass() async throws {
        try #require(Self.judges, "CI is set, but KONTO_KUBERNETES_VALIDATE or KONTO_CHECKOV is not: CI runs the tests through scripts/test.sh, which installs them")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("konto-kubernetes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let (status, output) = try await Self.check([out.path])
        #expect(status == 0, "deploy/kubernetes/check.sh failed:\n\(output.suffix(12_000))")
        // What the overlays are for: the dev one runs PostgreSQL beside one replica each; production brings none.
        let dev = try String(contentsOf: out.appendingPathComponent("dev.yaml"), encoding: .utf8)
        let production = try String(contentsOf: out.appendingPathComponent("production.yaml"), encoding: .utf8)
        #expect(dev.contains("kind: StatefulSet") && !production.contains("kind: StatefulSet"))
        #expect(production.components(separatedBy: "replicas: 2").count - 1 == 4)
        #expect(!production.contains("kind: Secret"), "production's Secrets are the operator's, never rendered from the repository")
    }

    @Test("the judges refuse a privileged container and an unknown field", .enabled(if: judges || onCI, "scripts/test.sh names the judges"))
    func judgesRefuse() async throws {
        try #require(Self.judges, "CI is set, but KONTO_KUBERNETES_VALIDATE or KONTO_CHECKOV is not")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("konto-kubernetes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let deployment = """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: flawed
            spec:
              replica: 2
              selector:
                matchLabels:
                  app: flawed
              template:
                metadata:
                  labels:
                    app: flawed
                spec:
                  containers:
                    - name: flawed
                      image: konto/gateway:latest
                      securityContext:
                        privileged: true

            """
        let file = folder.appendingPathComponent("flawed.yaml")
        try deployment.write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try await Self.check(["--judge", file.path])
        #expect(status != 0)
        #expect(output.contains("'replica' was unexpected"), "kubernetes-validate did not name the unknown field:\n\(output)")
        #expect(output.contains("CKV_K8S_16"), "checkov did not refuse the privileged container:\n\(output)")
    }

    /// deploy/kubernetes/check.sh with `arguments`, the package's `konto` for the dev overlay's keys.
    static func check(_ arguments: [String]) async throws -> (Int32, String) {
        let script = try EndToEndSystem.repositoryFile("deploy/kubernetes/check.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        var environment = Self.environment
        environment["KONTO"] = try ServiceProcess.executable(named: "konto")
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = try await Task.detached { try pipe.fileHandleForReading.readToEnd() ?? Data() }.value
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
