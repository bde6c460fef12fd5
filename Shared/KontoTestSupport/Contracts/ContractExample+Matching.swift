import Foundation
import KontoErrors
import KontoWire

extension ContractExample {
    /// The request to send: canonical JSON with every `$ref` replaced by its captured value.
    public func request(with bindings: ContractBindings) throws -> String {
        try Self.canonical(Self.resolve(Self.parse(request), bindings: bindings, example: name))
    }

    /// Compares the answer a provider gave with the recorded one, placeholders matching by kind; records captures.
    /// - Returns: one line per difference, with its JSON path; empty when the answer matches.
    public func mismatches(inResponse answer: some Collection<UInt8>, bindings: inout ContractBindings) throws -> [String] {
        guard let response else { return ["expected the error \(error?.code.rawValue ?? "?"), got a response: \(try Self.canonical(json: answer))"] }
        let actual = try JSONSerialization.jsonObject(with: Data(answer), options: [.fragmentsAllowed])
        var differences: [String] = []
        try Self.match(Self.parse(response), actual, path: "$", bindings: &bindings, example: name, differences: &differences)
        return differences
    }

    /// Compares an error a provider answered with against the recorded one (code, retryable flag, details).
    public func mismatches(inError actual: ExpectedError, bindings: inout ContractBindings) throws -> [String] {
        // A method the provider does not know answers every request alike: that is the one difference worth naming.
        if actual.code == .unknownMethod, error?.code != actual.code {
            return ["the provider has no method \(method) (\(actual.code)): removed or renamed?"]
        }
        guard let error else { return ["expected a response, got the error \(actual.code)"] }
        var differences: [String] = []
        if error.code != actual.code { differences.append("code: expected \(error.code), got \(actual.code)") }
        if error.retryable != actual.retryable { differences.append("retryable: expected \(error.retryable), got \(actual.retryable)") }
        switch (error.details, actual.details) {
        case (nil, nil):
            break
        case let (expected?, actualDetails?):
            let actualObject = try JSONSerialization.jsonObject(with: Data(actualDetails.utf8), options: [.fragmentsAllowed])
            try Self.match(Self.parse(expected), actualObject, path: "details", bindings: &bindings, example: name, differences: &differences)
        case (let expected, let actualDetails):
            differences.append("details: expected \(expected ?? "none"), got \(actualDetails ?? "none")")
        }
        return differences
    }

    // MARK: Samples for consumers

    /// Consumers decode examples with their own types, which cannot read a placeholder: every placeholder is
    /// replaced by a sample of its kind, and a `$ref` by the sample its capture got, in replay order.
    public static func samples(of examples: [ContractExample]) throws -> [ContractExample] {
        var captured: [String: Any] = [:]
        return try examples.map { example in
            var sample = example
            sample.request = try canonical(sampled(parse(example.request), captured: &captured, example: example.name))
            sample.response = try example.response.map { try canonical(sampled(parse($0), captured: &captured, example: example.name)) }
            if let details = example.error?.details {
                sample.error?.details = try canonical(sampled(parse(details), captured: &captured, example: example.name))
            }
            return sample
        }
    }

    // MARK: Walking the JSON

    static func parse(_ json: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
    }

    private static func resolve(_ value: Any, bindings: ContractBindings, example: String) throws -> Any {
        switch try ContractPlaceholder.parse(value) {
        case .reference(let name)?, .given(let name, _)?:
            return try bindings.value(of: name, in: example)
        case .totp(let name, let offset)?:
            guard let secret = try bindings.value(of: name, in: example) as? String, let code = TOTPTestCode.code(base32Secret: secret, at: Date(), offset: offset) else {
                throw ContractExampleError("\(example): $totp:\(name) needs a base32 secret captured as \(name)")
            }
            return code
        case .passkeyCreate(_, let challengeName)?, .passkeyGet(_, let challengeName, _)?:
            var userHandle: String?
            if case .passkeyGet(_, _, let account?)? = try ContractPlaceholder.parse(value) {
                guard let accountId = try bindings.value(of: account, in: example) as? String else {
                    throw ContractExampleError("\(example): a passkey's user handle needs an account ID captured as \(account)")
                }
                userHandle = SoftwareAuthenticator.base64URL(Array(accountId.utf8))
            }
            guard let challenge = try bindings.value(of: challengeName, in: example) as? String,
                  let json = try ContractPlaceholder.parse(value)?.passkeyJSON(challenge: challenge, userHandle: userHandle)
            else {
                throw ContractExampleError("\(example): a passkey placeholder needs a base64url challenge captured as \(challengeName)")
            }
            return json
        case .queryParameter(let name, let parameter)?:
            guard let url = try bindings.value(of: name, in: example) as? String,
                  let value = URLComponents(string: url)?.queryItems?.first(where: { $0.name == parameter })?.value
            else {
                throw ContractExampleError("\(example): $query:\(name):\(parameter) needs a URL with \(parameter) in its query captured as \(name)")
            }
            return value
        case .match?, .capture?:
            throw ContractExampleError("\(example): $match and $capture belong in expected answers, not in requests")
        case nil:
            break
        }
        if let object = value as? [String: Any] {
            return try object.mapValues { try resolve($0, bindings: bindings, example: example) }
        }
        if let array = value as? [Any] {
            return try array.map { try resolve($0, bindings: bindings, example: example) }
        }
        return value
    }

    private static func match(
        _ expected: Any,
        _ actual: Any,
        path: String,
        bindings: inout ContractBindings,
        example: String,
        differences: inout [String]
    ) throws {
        switch try ContractPlaceholder.parse(expected) {
        case .match(let kind)?:
            if !kind.accepts(actual) { differences.append("\(path): expected any \(kind.rawValue), got \(try canonical(actual))") }
            return
        case .capture(let name, let kind)?:
            if kind.accepts(actual) {
                try bindings.bind(name, to: actual)
            } else {
                differences.append("\(path): expected any \(kind.rawValue) (to capture as \(name)), got \(try canonical(actual))")
            }
            return
        case .reference(let name)?:
            let bound = try canonical(bindings.value(of: name, in: example))
            if bound != (try canonical(actual)) { differences.append("\(path): expected $ref:\(name) = \(bound), got \(try canonical(actual))") }
            return
        case .given?, .totp?, .passkeyCreate?, .passkeyGet?, .queryParameter?:
            throw ContractExampleError("\(example): $given, $totp, $query and passkeys belong in requests, not in expected answers")
        case nil:
            break
        }
        if let expectedObject = expected as? [String: Any] {
            guard let actualObject = actual as? [String: Any] else {
                differences.append("\(path): expected an object, got \(try canonical(actual))")
                return
            }
            for key in Set(expectedObject.keys).union(actualObject.keys).sorted() {
                switch (expectedObject[key], actualObject[key]) {
                case let (expectedValue?, actualValue?):
                    try match(expectedValue, actualValue, path: "\(path).\(key)", bindings: &bindings, example: example, differences: &differences)
                case (_?, nil):
                    differences.append("\(path).\(key): missing")
                case (nil, let actualValue?):
                    differences.append("\(path).\(key): unexpected \(try canonical(actualValue))")
                case (nil, nil):
                    break
                }
            }
            return
        }
        if let expectedArray = expected as? [Any] {
            guard let actualArray = actual as? [Any], actualArray.count == expectedArray.count else {
                differences.append("\(path): expected \(expectedArray.count) elements, got \(try canonical(actual))")
                return
            }
            for (index, (expectedValue, actualValue)) in zip(expectedArray, actualArray).enumerated() {
                try match(expectedValue, actualValue, path: "\(path)[\(index)]", bindings: &bindings, example: example, differences: &differences)
            }
            return
        }
        let expectedText = try canonical(expected)
        let actualText = try canonical(actual)
        if expectedText != actualText { differences.append("\(path): expected \(expectedText), got \(actualText)") }
    }

    private static func sampled(_ value: Any, captured: inout [String: Any], example: String) throws -> Any {
        switch try ContractPlaceholder.parse(value) {
        case .match(let kind)?:
            return kind.sample
        case .capture(let name, let kind)?:
            captured[name] = kind.sample
            return kind.sample
        case .reference(let name)?:
            guard let sample = captured[name] else {
                throw ContractExampleError("\(example): $ref:\(name) before any example captured \(name)")
            }
            return sample
        case .given(_, let kind)?:
            return kind.sample
        case .totp?:
            return "123456"
        case .queryParameter?:
            return "sample"
        case let placeholder?:
            // A passkey's answer to a sample challenge: the shape consumers decode.
            return placeholder.passkeyJSON(challenge: "c2FtcGxlLWNoYWxsZW5nZQ") ?? [:]
        case nil:
            break
        }
        if let object = value as? [String: Any] {
            // In sorted key order, as the provider's matcher walks it, so a capture precedes its references within
            // one answer too (a dictionary's own order differs from run to run).
            var result: [String: Any] = [:]
            for key in object.keys.sorted() {
                result[key] = try sampled(object[key]!, captured: &captured, example: example)
            }
            return result
        }
        if let array = value as? [Any] {
            return try array.map { try sampled($0, captured: &captured, example: example) }
        }
        return value
    }
}
