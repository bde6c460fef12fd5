import Foundation
import KontoWire

/// What a contract's examples were recorded against: `Tests/Contracts/<service>/contract.json`,
/// `{"service": …, "contractVersion": …, "wireVersion": …}`.
///
/// Examples recorded for another version of the contract or of the wire protocol say nothing about this one: loading
/// them fails until they are recorded again (and the manifest with them).
public struct ContractManifest: Sendable, Equatable, Codable {
    public static let fileName = "contract.json"

    public var service: String
    /// The contract's `version` the examples belong to.
    public var contractVersion: Int
    /// The KontoWire protocol version (``WireProtocolVersion/current``) the examples were exchanged with.
    public var wireVersion: Int

    public init(service: String, contractVersion: Int, wireVersion: Int) {
        self.service = service
        self.contractVersion = contractVersion
        self.wireVersion = wireVersion
    }

    /// The manifest in a contract's folder; a folder without one is refused.
    public static func load(from directory: URL) throws -> ContractManifest {
        let file = directory.appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw ContractExampleError("\(directory.lastPathComponent): no \(fileName); record the examples and state the versions they belong to")
        }
        do {
            return try JSONDecoder().decode(ContractManifest.self, from: data)
        } catch {
            throw ContractExampleError("\(directory.lastPathComponent)/\(fileName): \(error)")
        }
    }

    /// Throws, saying to re-record the examples, when the manifest is another service's or another version's.
    public func check(service expectedService: String, contractVersion expectedVersion: Int, wireVersion expectedWire: Int = Int(WireProtocolVersion.current)) throws {
        var problems: [String] = []
        if service != expectedService {
            problems.append("the manifest names the service \(service), not \(expectedService)")
        }
        if contractVersion != expectedVersion {
            problems.append("the examples belong to contract version \(contractVersion), the contract is at version \(expectedVersion)")
        }
        if wireVersion != expectedWire {
            problems.append("the examples belong to wire protocol version \(wireVersion), KontoWire speaks version \(expectedWire)")
        }
        guard problems.isEmpty else {
            throw ContractExampleError(
                "\(expectedService)/\(Self.fileName): " + problems.joined(separator: "; ")
                    + ". Re-record the examples in Tests/Contracts/\(expectedService) for the current versions, then update \(Self.fileName)."
            )
        }
    }
}
