import Foundation
import KontoContracts
import KontoTestSupport
import KontoWire
import Testing

/// Each contract folder states the contract and wire versions its examples were recorded for; examples of another
/// version fail to load, saying to re-record them.
@Suite("Contract manifests")
struct ContractManifestTests {
    @Test("each folder's manifest names its service, the contract's version and the wire protocol's")
    func manifests() throws {
        let folders = [
            (IdentityContract.serviceName, IdentityContract.version),
            (ProfileContract.serviceName, ProfileContract.version),
            (NotificationsContract.serviceName, NotificationsContract.version),
        ]
        for (service, version) in folders {
            let manifest = try ContractManifest.load(from: Self.contracts.appendingPathComponent(service))
            #expect(manifest == ContractManifest(service: service, contractVersion: version, wireVersion: Int(WireProtocolVersion.current)))
        }
    }

    @Test("examples of another contract or wire version are refused with a message to re-record them")
    func otherVersions() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"service":"identity","contractVersion":1,"wireVersion":7}"#.utf8).write(to: directory.appendingPathComponent(ContractManifest.fileName))
        let manifest = try ContractManifest.load(from: directory)
        let error = try #require(throws: ContractExampleError.self) {
            try manifest.check(service: "identity", contractVersion: IdentityContract.version)
        }
        #expect(error.description == "identity/contract.json: the examples belong to contract version 1, the contract is at version \(IdentityContract.version); "
            + "the examples belong to wire protocol version 7, KontoWire speaks version \(WireProtocolVersion.current). "
            + "Re-record the examples in Tests/Contracts/identity for the current versions, then update contract.json.")
        // The same manifest passes for the versions it names.
        try manifest.check(service: "identity", contractVersion: 1, wireVersion: 7)
    }

    @Test("a folder without a manifest is refused")
    func missing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: ContractExampleError.self) { try ContractManifest.load(from: directory) }
    }

    /// `Tests/Contracts`: this file is Tests/KontoContractsTests/….
    static let contracts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Contracts")
}
