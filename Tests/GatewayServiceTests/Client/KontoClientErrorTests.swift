import Foundation
import KontoClient
import Testing

/// Refusals as an app shows them (issue 70, 2): `LocalizedError` with the gateway's words, the stable code as the
/// failure's reason.
@Suite("KontoClientError as a LocalizedError")
struct KontoClientErrorTests {
    @Test("a refusal over URLSession reads as the gateway's detail, its code is the reason; Foundation's localizedDescription says the same")
    func gatewayRefusal() async throws {
        try await GatewayHarness.withGateway { gateway in
            let client = KontoClient(gatewayURL: gateway.baseURL)
            _ = try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: KontoClientTests.named("Ada"))
            let refusal = await KontoClientTests.refusal { _ = try await KontoClient(gatewayURL: gateway.baseURL).logIn(userId: "ada@example.org", password: "wrong horse battery") }
            let error = try #require(refusal)
            #expect(error.code == "account.wrongCredentials")
            #expect(error.errorDescription == error.detail && error.detail?.isEmpty == false)
            #expect(error.failureReason == "account.wrongCredentials")
            #expect((error as any Error).localizedDescription == error.detail)
        }
    }

    @Test("without a detail: a sentence for each client code and one naming any other code; a wait becomes the suggestion")
    func fallbacks() {
        let unreachable = KontoClientError(code: KontoClientError.Code.unreachable, status: 0)
        #expect(unreachable.errorDescription == "The account service cannot be reached. Check the connection and try again.")
        #expect(KontoClientError(code: KontoClientError.Code.notSignedIn, status: 0).errorDescription == "You are not signed in.")
        #expect(KontoClientError(code: KontoClientError.Code.keychain, status: 0).errorDescription == "The saved sign-in could not be read or kept.")
        let other = KontoClientError(code: "account.somethingNew", status: 409, detail: "")
        #expect(other.errorDescription == "The account service refused the request (account.somethingNew).")
        #expect(other.recoverySuggestion == nil)
        let throttled = KontoClientError(code: "account.throttled", status: 429, detail: "Too many attempts.", retryAfter: 30)
        #expect(throttled.errorDescription == "Too many attempts." && throttled.recoverySuggestion == "Try again in 30 seconds.")
        #expect(KontoClientError(code: "account.throttled", status: 429, retryAfter: 1).recoverySuggestion == "Try again in a second.")
    }
}
