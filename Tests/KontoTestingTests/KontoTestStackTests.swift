import Foundation
import KontoClient
import KontoModel
import KontoTesting
import NIOCore
import Testing

/// The test kit a downstream project uses: a whole stack in process, the client, and the sign-up and log-in helpers.
@Suite("withStack", .timeLimit(.minutes(2)))
struct KontoTestStackTests {
    @Test("sign up with the helpers, read typed keys, and log in from a second client of the same stack")
    func journey() async throws {
        let accountId = try await withStack { client, stack in
            var details = AccountDetails()
            details[\.dateOfBirth] = CalendarDate(year: 1815, month: 12, day: 10)
            let signUp = try await client.signUp(email: "ada@example.org", name: PersonName(givenName: "Ada", familyName: "Lovelace"), details: details)
            let account = try await client.account()
            #expect(account[\.name] == PersonName(givenName: "Ada", familyName: "Lovelace"))
            #expect(account[\.dateOfBirth] == CalendarDate(year: 1815, month: 12, day: 10))

            let laptop = stack.makeClient()
            let logIn = try await laptop.logIn(email: "ada@example.org")
            #expect(logIn.session.accountId == signUp.session.accountId)
            #expect(try await laptop.logOutEverywhere() == 2)
            await #expect(throws: KontoClientError.self) { try await client.account() }
            return signUp.session.accountId
        }
        #expect(!accountId.isEmpty)
    }

    @Test("each stack is its own: an account of one is unknown to the next, and the stack is stopped after the body")
    func isolated() async throws {
        let url = try await withStack { client, stack in
            try await client.signUp(email: "grace@example.org")
            return stack.gatewayURL
        }
        // Stopped: nothing answers there any more (a short deadline: async-http-client retries refused connections).
        let stopped = KontoClient(gatewayURL: url, timeout: .seconds(2))
        await #expect(throws: KontoClientError.self) { try await stopped.schema() }
        try await withStack { client in
            await #expect {
                try await client.logIn(email: "grace@example.org")
            } throws: { error in
                (error as? KontoClientError)?.code == AccountError.Code.wrongCredentials.rawValue
            }
        }
    }

    @Test("a throwing body still stops the stack, and its error comes out")
    func throwing() async throws {
        struct Expected: Error {}
        await #expect(throws: Expected.self) {
            try await withStack { _ in throw Expected() }
        }
    }
}
