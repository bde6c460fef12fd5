import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

/// Every method of every contract has a success example, every (method, code) pair its implementation can answer
/// with has an example (or a listed exemption with its reason), and no example uses a method or code its contract
/// does not declare.
@Suite("Contract coverage")
struct ContractCoverageTests {
    static let contracts: [@Sendable () throws -> ContractCoverage] = [ContractCoverage.identity, ContractCoverage.profile, ContractCoverage.notifications]

    @Test("every method succeeds in an example and every declared error code of it has one", arguments: ["identity", "profile", "notifications"])
    func complete(service: String) throws {
        let coverage = try Self.coverage(service)
        #expect(coverage.problems.isEmpty, "\(coverage.problems.joined(separator: "\n"))")
    }

    @Test("the check names a missing (service, method, code), a method without success, an undeclared method and code")
    func checkNamesProblems() throws {
        var coverage = try ContractCoverage.identity()
        // Doctored copies of the real examples: one pair's examples removed, one method's successes removed, an
        // example moved to a method the contract lacks, another given a code its method does not declare.
        coverage.examples.removeAll { $0.method == IdentityContract.login.name && $0.error?.code == AccountError.Code.throttled }
        coverage.examples.removeAll { $0.method == IdentityContract.logout.name && $0.error == nil }
        var unknown = try #require(coverage.examples.first { $0.method == IdentityContract.validateSession.name })
        unknown.method = "identity.validateSessoin"
        var undeclared = try #require(coverage.examples.first { $0.method == IdentityContract.signInAnonymously.name && $0.error == nil })
        undeclared.response = nil
        undeclared.error = .init(code: AccountError.Code.versionConflict, retryable: false, details: nil)
        coverage.examples += [unknown, undeclared]
        let problems = coverage.problems
        #expect(problems.contains("identity: identity.login account.throttled has no example (and no exemption)"), "\(problems)")
        #expect(problems.contains("identity: identity.logout has no example that succeeds"), "\(problems)")
        #expect(problems.contains("\(unknown.label): identity.validateSessoin is not a method of the identity contract"), "\(problems)")
        #expect(problems.contains("\(undeclared.label): account.versionConflict is not declared for identity.signInAnonymously"), "\(problems)")
        #expect(problems.count == 4, "\(problems)")
    }

    @Test("an exemption must be declared and must not have an example")
    func exemptionsAreChecked() throws {
        var coverage = try ContractCoverage.profile()
        coverage.exemptions = [
            ContractExemption(ProfileContract.load.name, AccountError.Code.notFound, reason: "doctored"),
            ContractExemption(ProfileContract.load.name, AccountError.Code.throttled, reason: "doctored"),
        ]
        #expect(coverage.problems == [
            "profile: exemption for profile.load account.notFound, which has an example after all",
            "profile: exemption for profile.load account.throttled, which is not declared",
        ])
    }

    @Test("errorCodes is the union of every method's codes, and every code is declared in KontoErrors", arguments: ["identity", "profile", "notifications"])
    func errorCodesAreTheUnion(service: String) throws {
        let coverage = try Self.coverage(service)
        #expect(Set(coverage.errorCodes) == Set(coverage.errorCodesByMethod.values.joined()))
        for code in coverage.errorCodes {
            #expect(code.isKnown, "\(code)")
        }
    }

    @Test("every exemption has a reason", arguments: IdentityContract.exemptions + ProfileContract.exemptions + NotificationsContract.exemptions)
    func exemptionReasons(_ exemption: ContractExemption) {
        #expect(exemption.reason.count > 20)
    }

    static func coverage(_ service: String) throws -> ContractCoverage {
        switch service {
        case "identity": try ContractCoverage.identity()
        case "profile": try ContractCoverage.profile()
        default: try ContractCoverage.notifications()
        }
    }
}

extension ContractExemption: CustomTestStringConvertible {
    public var testDescription: String { "\(method) \(code)" }
}
