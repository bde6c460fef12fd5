import Foundation
@testable import GatewayService
import Testing

/// OAuth's form bodies and Basic credentials, read as RFC 6749 writes them.
@Suite("Gateway: OAuth forms")
struct OAuthFormTests {
    @Test("fields decoded ('+' a space, percent escapes), in order, the first of a repeated one kept and the repetition named; empty values absent")
    func fields() throws {
        let form = try #require(OAuthForm("grant_type=authorization_code&code=a%2Bb+c&scope=openid+email&code=again&state="))
        #expect(form["grant_type"] == "authorization_code" && form["code"] == "a+b c" && form["scope"] == "openid email")
        #expect(form.duplicated == "code")
        #expect(form["state"] == nil && form["missing"] == nil)
        #expect(form.pairs.map(\.name) == ["grant_type", "code", "scope", "code", "state"])
        #expect(OAuthForm("")?.pairs.isEmpty == true)
        // Malformed escapes and characters no query may hold: never a trap (assigning Foundation's percentEncodedQuery
        // one traps); read leniently, as themselves, for the checks after to refuse.
        for (body, value) in [("token=%", "%"), ("token=%4", "%4"), ("a=b c", "b c"), ("a=\u{0}", "\u{0}"), ("a=é", "é")] {
            #expect(OAuthForm(body)?.pairs.first?.value == value, "\(body)")
        }
        #expect(OAuthForm("token=%zz").map { $0.pairs.first?.value == "%zz" } ?? true)
    }

    @Test("Basic credentials: base64 of the form-encoded id and secret; anything else is none")
    func basic() {
        let encoded = "Basic " + Data("my%20client:p%3Ass+word".utf8).base64EncodedString()
        #expect(OAuthForm.basicCredentials(encoded)?.id == "my client" && OAuthForm.basicCredentials(encoded)?.secret == "p:ss word")
        #expect(OAuthForm.basicCredentials("basic " + Data("id:".utf8).base64EncodedString())?.secret == "")
        #expect(OAuthForm.basicCredentials("Bearer abc") == nil)
        #expect(OAuthForm.basicCredentials("Basic !!!") == nil)
        #expect(OAuthForm.basicCredentials("Basic " + Data("no-colon".utf8).base64EncodedString()) == nil)
        #expect(OAuthForm.basicCredentials("Basic " + Data(":secret".utf8).base64EncodedString()) == nil, "no id")
        #expect(OAuthForm.basicCredentials(nil) == nil)
    }
}
