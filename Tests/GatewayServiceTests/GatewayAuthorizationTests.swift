import Foundation
import KontoTesting
import NIOHTTP1
import Testing

/// One account's token never reads, changes or deletes another account's data: every route that takes a session
/// acts on the token's account only (the API has no account ids in its paths to get wrong).
@Suite("Gateway authorization", .serialized)
struct GatewayAuthorizationTests {
    @Test("every session route with A's token leaves B's details, credentials, sessions and events alone")
    func tokensActOnTheirOwnAccount() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (alice, aliceId) = try await gateway.signUp("alice@example.org", details: #"{"name":{"givenName":"Alice"}}"#)
            let (bob, bobId) = try await gateway.signUp("bob@example.org", details: #"{"name":{"givenName":"Bob"}}"#)
            let bobBefore = try await gateway.request(.GET, "/v1/account", token: bob)

            // Reads.
            let read = try await gateway.request(.GET, "/v1/account", token: alice)
            #expect(read.object["accountId"] as? String == aliceId)
            #expect(((read.object["details"] as? [String: Any])?["name"] as? [String: Any])?["givenName"] as? String == "Alice")

            // Changes: details, password, userId, the privileged window, sessions.
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"dateOfBirth":"1990-01-01"},"remove":["genderIdentity"]}"#, token: alice).status == 200)
            // Reauthentication rotates A's token: the fresh one goes on.
            let reauthenticated = try await gateway.request(.POST, "/v1/account/reauthenticate", json: #"{"password":"correct horse battery"}"#, token: alice)
            #expect(reauthenticated.status == 200)
            let aliceFresh = try #require((reauthenticated.object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.PUT, "/v1/account/password", json: #"{"newPassword":"alice's new password"}"#, token: aliceFresh).status == 200)
            #expect(try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"alice2@example.org"}"#, token: aliceFresh).status == 204)
            #expect(try await gateway.request(.DELETE, "/v1/sessions", token: aliceFresh).status == 200)
            // A password that is B's does not reauthenticate A.
            let aliceAgain = try #require((try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"alice2@example.org","password":"alice's new password"}"#).object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.POST, "/v1/account/reauthenticate", json: #"{"password":"correct horse battery"}"#, token: aliceAgain).status == 401)

            // A's event stream carries A's events only.
            let reader = GatewayEventStreamTests.StreamReader()
            let (status, task) = try await GatewayEventStreamTests.open(gateway, token: aliceAgain, into: reader)
            #expect(status == 200)
            // A new stream starts at the present: B signs in, then A changes; only A's change shows.
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"bob@example.org","password":"correct horse battery"}"#).status == 200)
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"dateOfBirth":"1991-01-01"}}"#, token: aliceAgain).status == 200)
            try await GatewayEventStreamTests.until(reader, "A's detailsChanged") { events, _ in events.contains { $0.event == "detailsChanged" } }
            #expect(await reader.events.allSatisfy { $0.object["accountId"] as? String == aliceId })

            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: aliceAgain).status == 204)
            try await GatewayEventStreamTests.until(reader, "the end of A's stream") { _, ended in ended }
            try await task.value
            let aliceLast = try #require((try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"alice2@example.org","password":"alice's new password"}"#).object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.DELETE, "/v1/account", token: aliceLast).status == 204)

            // B: the same details and version, the same credentials, the same session.
            let bobAfter = try await gateway.request(.GET, "/v1/account", token: bob)
            #expect(bobAfter.status == 200)
            #expect(bobAfter.object["accountId"] as? String == bobId)
            #expect(bobAfter.headers.first(name: "ETag") == bobBefore.headers.first(name: "ETag"))
            #expect(NSDictionary(dictionary: bobAfter.object["details"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: bobBefore.object["details"] as? [String: Any] ?? [:]))
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"bob@example.org","password":"correct horse battery"}"#).status == 200)
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"alice2@example.org","password":"alice's new password"}"#).status == 401)
        }
    }
}
