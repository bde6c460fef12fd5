import KontoContracts
import KontoErrors
import KontoTestSupport
import Testing

/// One contract as the coverage check sees it: its methods, the codes each declares, its exemptions and examples.
struct ContractCoverage: Sendable, CustomTestStringConvertible {
    var service: String
    var methods: [String]
    var errorCodes: [KontoErrorCode]
    var errorCodesByMethod: [String: [KontoErrorCode]]
    var exemptions: [ContractExemption]
    var examples: [ContractExample]

    var testDescription: String { service }

    /// Everything wrong with the contract's coverage, one line each, naming the service, method and code (or the
    /// example); empty when every method has a success example and every declared (method, code) pair an example or an
    /// exemption, and every example's method and code is declared.
    var problems: [String] {
        var problems: [String] = []
        let declaredMethods = Set(methods)
        if Set(errorCodesByMethod.keys) != declaredMethods {
            problems += declaredMethods.subtracting(errorCodesByMethod.keys).sorted().map { "\(service): \($0) declares no error codes (give [] for none)" }
            problems += Set(errorCodesByMethod.keys).subtracting(declaredMethods).sorted().map { "\(service): error codes declared for \($0), which is not a method of the contract" }
        }
        let union = Set(errorCodesByMethod.values.joined())
        if union != Set(errorCodes) {
            problems.append("\(service): errorCodes \(Set(errorCodes).sorted()) differ from the union of errorCodesByMethod \(union.sorted())")
        }
        for example in examples {
            guard declaredMethods.contains(example.method) else {
                problems.append("\(example.label): \(example.method) is not a method of the \(service) contract")
                continue
            }
            if let code = example.error?.code, !(errorCodesByMethod[example.method] ?? []).contains(code) {
                problems.append("\(example.label): \(code) is not declared for \(example.method)")
            }
        }
        let recorded = Set(examples.compactMap { example in example.error.map { Pair(method: example.method, code: $0.code) } })
        let exempt = Set(exemptions.map { Pair(method: $0.method, code: $0.code) })
        for method in methods {
            if !examples.contains(where: { $0.method == method && $0.error == nil }) {
                problems.append("\(service): \(method) has no example that succeeds")
            }
            for code in errorCodesByMethod[method] ?? [] {
                let pair = Pair(method: method, code: code)
                if !recorded.contains(pair), !exempt.contains(pair) {
                    problems.append("\(service): \(method) \(code) has no example (and no exemption)")
                }
            }
        }
        for exemption in exemptions {
            let pair = Pair(method: exemption.method, code: exemption.code)
            if !(errorCodesByMethod[exemption.method] ?? []).contains(exemption.code) {
                problems.append("\(service): exemption for \(exemption.method) \(exemption.code), which is not declared")
            }
            if recorded.contains(pair) {
                problems.append("\(service): exemption for \(exemption.method) \(exemption.code), which has an example after all")
            }
        }
        return problems
    }

    private struct Pair: Hashable {
        var method: String
        var code: KontoErrorCode
    }
}

extension ContractCoverage {
    static func identity() throws -> ContractCoverage {
        ContractCoverage(
            service: IdentityContract.serviceName,
            methods: IdentityContract.methods,
            errorCodes: IdentityContract.errorCodes,
            errorCodesByMethod: IdentityContract.errorCodesByMethod,
            exemptions: IdentityContract.exemptions,
            examples: try ContractExample.load(service: IdentityContract.serviceName, contractVersion: IdentityContract.version)
        )
    }

    static func profile() throws -> ContractCoverage {
        ContractCoverage(
            service: ProfileContract.serviceName,
            methods: ProfileContract.methods,
            errorCodes: ProfileContract.errorCodes,
            errorCodesByMethod: ProfileContract.errorCodesByMethod,
            exemptions: ProfileContract.exemptions,
            examples: try ContractExample.load(service: ProfileContract.serviceName, contractVersion: ProfileContract.version)
        )
    }

    static func notifications() throws -> ContractCoverage {
        ContractCoverage(
            service: NotificationsContract.serviceName,
            methods: NotificationsContract.methods,
            errorCodes: NotificationsContract.errorCodes,
            errorCodesByMethod: NotificationsContract.errorCodesByMethod,
            exemptions: NotificationsContract.exemptions,
            examples: try ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version)
        )
    }
}
