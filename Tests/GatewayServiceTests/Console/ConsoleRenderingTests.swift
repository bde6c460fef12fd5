import Foundation
@testable import GatewayConsole
@testable import GatewayService
import KontoModel
import KontoRuntime
import Testing

/// The console's pages as built from the configured keys, rendered without a server.
@Suite("Web console pages")
struct ConsoleRenderingTests {
    static let accounts: AccountConfiguration = {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/accounts.yaml").path
        // The checked-in file loads (AccountConfigurationLoaderTests); a failure here is that test's failure.
        return (try? AccountConfigurationLoader().load(path: path)) ?? .default
    }()

    static let schema = ConsoleSchema(configuration: accounts)

    static func render(_ template: String, _ configure: (inout ConsolePage) -> Void) throws -> String {
        var page = ConsolePage(title: "Test", base: "/account", csrf: "token")
        configure(&page)
        return ConsoleTemplates.render(page, template: template, in: try ConsoleTemplates.library())
    }

    /// The opening tag of the element with `id`.
    static func tag(_ id: String, in html: String) -> String? {
        guard let range = html.range(of: "id=\"\(id)\"") else { return nil }
        let start = html[..<range.lowerBound].lastIndex(of: "<") ?? range.lowerBound
        let end = html[range.upperBound...].firstIndex(of: ">") ?? html.endIndex
        return String(html[start...end])
    }

    @Test("sign-up asks the requires and collects keys, by category in the configured order, each with the input of its type")
    func signUpFields() throws {
        let html = try Self.render("signup") { $0.categories = Self.schema.categories(Self.schema.signUpKeys, values: [:], errors: [:]) }
        let categories = html.matches(of: /<fieldset class="category" id="category-(\w+)">/).map { String($0.output.1) }
        #expect(categories == ["credentials", "name", "contactDetails", "personalDetails", "other"])
        #expect(Self.tag("field-userId", in: html)?.contains(#"type="email""#) == true)
        #expect(Self.tag("field-password", in: html)?.contains(#"type="password""#) == true)
        #expect(Self.tag("field-password", in: html)?.contains(#"data-key="password""#) == true)
        #expect(Self.tag("field-name-givenName", in: html)?.contains(#"name="name[givenName]""#) == true)
        #expect(Self.tag("field-name-familyName", in: html) != nil)
        // The name's other parts are offered only once they hold something (below, in the edit form).
        #expect(Self.tag("field-name-middleName", in: html) == nil)
        #expect(Self.tag("field-handle", in: html)?.contains(#"aria-required="true""#) == true)
        #expect(Self.tag("field-biography", in: html)?.contains(#"type="text""#) == true)
        #expect(Self.tag("field-email", in: html)?.contains(#"type="email""#) == true)
        #expect(Self.tag("field-newsletter", in: html)?.contains(#"type="checkbox""#) == true)
        // supports and manual keys are not asked at sign-up.
        for identifier in ["dateOfBirth", "languages-0", "memberSince", "plan", "heightCentimetres"] {
            #expect(Self.tag("field-\(identifier)", in: html) == nil, "\(identifier)")
        }
        // Every input has its label.
        for match in html.matches(of: /<input id="([^"]+)"/) {
            #expect(html.contains("<label for=\"\(match.output.1)\""), "no label for \(match.output.1)")
        }
    }

    @Test("SpeziAccount's default schema: the name is asked once (no \"Name / Name (required)\"), labels in sentence case")
    func defaultSchemaSignUp() throws {
        let schema = ConsoleSchema(configuration: .default)
        let html = try Self.render("signup") { $0.categories = schema.categories(schema.signUpKeys, values: [:], errors: [:]) }
        #expect(html.contains(#"<div class="category" id="category-name">"#), "\(html)")
        #expect(!html.contains("<legend>Name</legend>"), "\(html)")
        #expect(html.components(separatedBy: #"<legend>Name <span class="required">(required)</span></legend>"#).count == 2, "\(html)")
        #expect(html.contains(#"<label for="field-dateOfBirth">Date of birth</label>"#), "\(html)")
        #expect(html.contains(#"<label for="field-genderIdentity">Gender identity</label>"#), "\(html)")
        #expect(html.contains(#"<label for="field-userId">Email address <span class="required">(required)</span></label>"#), "\(html)")
    }

    @Test("a name beside another key of its category (deploy/accounts.yaml's handle) is the \"Full name\" in the fieldset \"Name\", not \"Name / Name\"")
    func nameBesideAHandle() throws {
        let accounts = try AccountConfigurationLoader().load(data: Data("""
            keys:
              - { identifier: userId, requirement: requires }
              - { identifier: password, requirement: requires }
              - { identifier: name, requirement: requires }
              - { identifier: handle, type: string, category: name, requirement: requires }
            """.utf8), format: .yaml, source: "test")
        let schema = ConsoleSchema(configuration: accounts)
        let html = try Self.render("signup") { $0.categories = schema.categories(schema.signUpKeys, values: [:], errors: [:]) }
        #expect(html.contains("<legend>Name</legend>"), "\(html)")
        #expect(html.contains(#"<legend>Full name <span class="required">(required)</span></legend>"#), "\(html)")
        #expect(!html.contains(#"<legend>Name <span class="required">(required)</span></legend>"#), "\(html)")
    }

    @Test("an unnamed passkey is named after the browser that made it", arguments: [
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "Chrome on Linux"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1", "Safari on iPhone"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.0; rv:132.0) Gecko/20100101 Firefox/132.0", "Firefox on macOS"),
        ("curl/8.5.0", nil),
    ])
    func browserName(userAgent: String, expected: String?) {
        #expect(BrowserName.from(userAgent: userAgent) == expected)
    }

    @Test("the edit form adds the supports keys with dates, enums, numbers and repeated fields, and leaves out credentials and manual keys")
    func editFields() throws {
        let values: [String: AccountValue] = [
            "languages": .array([.string("en"), .string("de")]), "genderIdentity": .string("nonBinary"), "shoeSize": .double(42.5),
            "name": .object(["givenName": .string("Ada"), "nickname": .string("Countess")]),
        ]
        let html = try Self.render("edit") { $0.categories = Self.schema.categories(Self.schema.editKeys, values: values, errors: [:]) }
        #expect(Self.tag("field-dateOfBirth", in: html)?.contains(#"type="date""#) == true)
        #expect(Self.tag("field-name-nickname", in: html)?.contains(#"value="Countess""#) == true)
        #expect(Self.tag("field-name-familyName", in: html)?.contains(#"value="""#) == true)
        #expect(Self.tag("field-heightCentimetres", in: html)?.contains(#"step="1""#) == true)
        #expect(Self.tag("field-shoeSize", in: html)?.contains(#"step="any""#) == true)
        #expect(Self.tag("field-shoeSize", in: html)?.contains(#"value="42.5""#) == true)
        #expect(Self.tag("field-genderIdentity", in: html)?.hasPrefix("<select") == true)
        #expect(html.contains(#"<option value="nonBinary" selected>Non binary</option>"#))
        // One input per item and one empty one more; the script's button adds others.
        #expect(Self.tag("field-languages-0", in: html)?.contains(#"value="en""#) == true)
        #expect(Self.tag("field-languages-1", in: html)?.contains(#"value="de""#) == true)
        #expect(Self.tag("field-languages-2", in: html)?.contains(#"value="""#) == true)
        #expect(Self.tag("add-languages", in: html) != nil)
        #expect(Self.tag("field-phoneNumbers-0", in: html) != nil)
        for identifier in ["userId", "password", "accountId", "memberSince", "plan"] {
            #expect(Self.tag("field-\(identifier)", in: html) == nil, "\(identifier)")
        }
    }

    @Test("a key the server writes is on neither form, whatever its requirement")
    func serverOwnedKeysNotOffered() throws {
        let accounts = try AccountConfiguration(json: Data("""
        {"keys": [
          {"identifier": "userId", "requirement": "requires"},
          {"identifier": "password", "requirement": "requires"},
          {"identifier": "tier", "type": "string", "requirement": "collects", "writableBy": "server"},
          {"identifier": "credits", "type": "integer", "requirement": "supports", "writableBy": "server"},
          {"identifier": "motto", "type": "string", "requirement": "supports"}
        ]}
        """.utf8), source: "accounts.json")
        let schema = ConsoleSchema(configuration: accounts)
        #expect(!schema.signUpKeys.map(\.0.identifier).contains("tier"))
        #expect(schema.editKeys.map(\.0.identifier) == ["motto"])
    }

    @Test("a field error follows its own input, the input says so, and every typed value is kept")
    func fieldErrorKeepsInput() throws {
        let values: [String: AccountValue] = [
            "handle": .string("Bad Handle!"), "biography": .string("Wrote programs"),
            "name": .object(["givenName": .string("Ada")]), "userId": .string("ada@example.org"), "password": .string("secret pass 1"),
        ]
        let message = "Use 3 to 20 lowercase letters, digits or underscores."
        let html = try Self.render("signup") {
            $0.categories = Self.schema.categories(Self.schema.signUpKeys, values: values, errors: ["handle": message])
        }
        let input = try #require(Self.tag("field-handle", in: html))
        #expect(input.contains(#"value="Bad Handle!""#))
        #expect(input.contains(#"aria-invalid="true" aria-describedby="error-handle""#))
        let inputEnd = try #require(html.range(of: input)?.upperBound)
        let error = try #require(html.range(of: "<p class=\"field-error\" id=\"error-handle\">\(message)</p>"))
        // Right after the input: no other field in between.
        #expect(!html[inputEnd..<error.lowerBound].contains("<input"))
        #expect(Self.tag("field-biography", in: html)?.contains(#"value="Wrote programs""#) == true)
        #expect(Self.tag("field-name-givenName", in: html)?.contains(#"value="Ada""#) == true)
        #expect(Self.tag("field-userId", in: html)?.contains(#"value="ada@example.org""#) == true)
    }

    @Test("every value reaches the page escaped, in text and in attributes")
    func escaping() throws {
        let hostile = #""><script>alert(1)</script>'"#
        let html = try Self.render("overview") { page in
            page.shown = Self.schema.shown(["name": .object(["givenName": .string(hostile)]), "biography": .string(hostile)])
            page.notice = hostile
        }
        let edit = try Self.render("edit") { page in
            page.categories = Self.schema.categories(Self.schema.editKeys, values: ["biography": .string(hostile)], errors: ["biography": hostile])
        }
        for page in [html, edit] {
            #expect(!page.contains("<script>alert"))
            #expect(page.contains("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"))
        }
        #expect(html.contains(#"<dd id="value-name">&quot;&gt;&lt;script&gt;"#))
    }

    @Test("no template writes a value unescaped")
    func noUnescapedTags() {
        for (name, text) in ConsoleTemplates.all {
            #expect(!text.contains("{{{") && !text.contains("{{&"), "\(name)")
        }
    }

    @Test("a submitted form becomes typed values; what is not of its key's type is an error, an empty input no value")
    func formValues() {
        let form = ConsoleForm.decode(
            "handle=ada_l&biography=&newsletter=true&heightCentimetres=abc&shoeSize=42.5&languages[]=en&languages[]=&languages[]=de"
                + "&name[givenName]=Ada&name[familyName]=Lovelace&name[evil]=x&dateOfBirth=1815-12-10&genderIdentity=female"
        )
        #expect(form.list("languages") == ["en", "", "de"])
        #expect(form.parts("name") == ["givenName": "Ada", "familyName": "Lovelace", "evil": "x"])
        let (values, errors) = Self.schema.values(from: form, keys: Self.schema.signUpKeys + Self.schema.editKeys)
        #expect(values["handle"] == .string("ada_l"))
        #expect(values["biography"] == nil)
        #expect(values["newsletter"] == .bool(true))
        #expect(values["shoeSize"] == .double(42.5))
        #expect(values["languages"] == .array([.string("en"), .string("de")]))
        #expect(values["name"] == .object(["givenName": .string("Ada"), "familyName": .string("Lovelace")]))
        #expect(values["dateOfBirth"] == .string("1815-12-10"))
        #expect(values["genderIdentity"] == .string("female"))
        // Kept as typed for the form, with an error: never sent.
        #expect(errors == ["heightCentimetres": "Enter a whole number."])
        #expect(values["heightCentimetres"] == .string("abc"))
        // An unchecked box is false.
        #expect(Self.schema.values(from: ConsoleForm.decode("handle=x"), keys: Self.schema.signUpKeys).values["newsletter"] == .bool(false))
        // Not a form at all: no values, and the missing ones are reported like any other.
        #expect(ConsoleForm.decode("%%%").values.isEmpty)
    }

    @Test("stored values are shown as people read them")
    func shownValues() {
        let shown = Self.schema.shown([
            "name": .object(["givenName": .string("Ada"), "familyName": .string("Lovelace"), "nickname": .string("A")]),
            "newsletter": .bool(false), "genderIdentity": .string("preferNotToState"), "languages": .array([.string("en"), .string("de")]),
            "shoeSize": .double(42), "accountId": .string("hidden"), "userId": .string("ada@example.org"),
        ])
        let texts = Dictionary(uniqueKeysWithValues: shown.flatMap(\.values).map { ($0.id, $0.text) })
        #expect(texts == [
            "value-name": "Ada Lovelace", "value-newsletter": "No", "value-genderIdentity": "Prefer not to state",
            "value-languages": "en, de", "value-shoeSize": "42", "value-userId": "ada@example.org",
        ])
        #expect(shown.map(\.id) == ["category-credentials", "category-name", "category-personalDetails", "category-other"])
        // The userId named as the login form names it.
        #expect(shown.first?.values.map(\.label) == ["Email address"])
    }

    @Test("the console's path is off or a lowercase path outside the API's", arguments: [
        ("off", nil), ("/account", "/account"), ("/my-account/console", "/my-account/console"),
    ] as [(String, String?)])
    func consolePath(value: String, expected: String?) throws {
        #expect(try ServiceEnvironment.consolePath(value) == expected)
    }

    @Test("a console path that is no path, or one of the API's, is refused naming its variable", arguments: [
        "account", "/Account", "/account/", "/", "/v1/account", "/health", "/metrics", "/a b", "/a//b",
    ])
    func badConsolePath(value: String) {
        #expect(throws: (any Error).self) { try ServiceEnvironment.consolePath(value) }
        #expect((try? ServiceEnvironment.consolePath(value)) == nil)
    }
}
