import KontoModel
import Testing

@Suite("Supported keys of a storage")
struct SupportedKeysTests {
    private func configuration(_ supported: SupportedKeys, unknownKeys: UnknownKeyPolicy) throws -> AccountConfiguration {
        try AccountConfiguration(
            keys: [.requires(\.userId), .collects(\.email), .supports(\.phoneNumbers)],
            supportedKeys: supported,
            unknownKeys: unknownKeys
        )
    }

    @Test("arbitrary supports every key")
    func arbitrarySupportsEverything() throws {
        let configuration = try configuration(.arbitrary, unknownKeys: .keep)
        #expect(configuration.unsupportedKeyErrors(in: ["email", "phoneNumbers", "somethingElse"]).isEmpty)
    }

    @Test("exactly refuses declared keys outside the set, once each, sorted; accountId is always supported")
    func exactlyRefusesOthers() throws {
        let configuration = try configuration(.exactly(["userId", "email"]), unknownKeys: .reject)
        let errors = configuration.unsupportedKeyErrors(in: ["phoneNumbers", "email", "accountId", "name", "name"])
        #expect(errors == [
            AccountFieldError(key: "name", code: .unsupportedKey, message: "This account key is not supported here."),
            AccountFieldError(key: "phoneNumbers", code: .unsupportedKey, message: "This account key is not supported here."),
        ])
    }

    @Test("unknown keys are left to the unknown-key policy when it rejects, and refused by exactly when it keeps")
    func unknownKeysFollowThePolicy() throws {
        let rejecting = try configuration(.exactly(["userId"]), unknownKeys: .reject)
        #expect(rejecting.unsupportedKeyErrors(in: ["favouriteColour"]).isEmpty)
        #expect(rejecting.valueErrors(in: ["favouriteColour": .string("blue")]).map(\.code) == [.unknownKey])

        let keeping = try configuration(.exactly(["userId"]), unknownKeys: .keep)
        #expect(keeping.unsupportedKeyErrors(in: ["favouriteColour"]).map(\.code) == [.unsupportedKey])
    }
}
