import Foundation
import KontoClient
import KontoModel
import Testing

/// `KEY=VALUE` texts (the `konto account set` arguments) read as the keys' types from a published schema.
@Suite("KontoSchema assignments")
struct KontoSchemaAssignmentTests {
    /// A deployment's schema with every built-in key as `GET /v1/schema` publishes it, plus keys of the other types.
    static let schema: KontoSchema = {
        let everyBuiltIn = try! AccountConfiguration(keys: [
            .requires(\.userId), .requires(\.password), .collects(\.name), .collects(\.email),
            .supports(\.dateOfBirth), .supports(\.genderIdentity), .supports(\.phoneNumbers),
        ])
        var schema = try! JSONDecoder().decode(KontoSchema.self, from: JSONEncoder().encode(everyBuiltIn))
        let extra = """
            {"userIdType":"emailAddress","keys":[
              {"identifier":"newsletter","name":"Newsletter","category":"other","valueType":{"type":"bool"},"requirement":"supports","rules":[],"isSecret":false},
              {"identifier":"height","name":"Height","category":"other","valueType":{"type":"double"},"requirement":"supports","rules":[],"isSecret":false},
              {"identifier":"visits","name":"Visits","category":"other","valueType":{"type":"integer"},"requirement":"supports","rules":[],"isSecret":false}
            ]}
            """
        schema.keys += try! JSONDecoder().decode(KontoSchema.self, from: Data(extra.utf8)).keys
        return schema
    }()

    @Test("each type is read as itself; lists from repeated assignments; a name whole or by part")
    func types() throws {
        let details = try Self.schema.details(fromAssignments: [
            "dateOfBirth=1815-12-10", "genderIdentity=female", "phoneNumbers=+41 79", "phoneNumbers=+49 30",
            "newsletter=yes", "height=1.68", "visits=3", "name=Ada King Lovelace", "email=ada=countess@example.org",
        ])
        #expect(details[identifier: "dateOfBirth"] == .string("1815-12-10"))
        #expect(details[identifier: "genderIdentity"] == .string("female"))
        #expect(details[identifier: "phoneNumbers"] == .array([.string("+41 79"), .string("+49 30")]))
        #expect(details[identifier: "newsletter"] == .bool(true))
        #expect(details[identifier: "height"] == .double(1.68))
        #expect(details[identifier: "visits"] == .integer(3))
        #expect(details[\.name] == PersonName(givenName: "Ada", familyName: "King Lovelace"))
        // Only the first '=' separates.
        #expect(details[identifier: "email"] == .string("ada=countess@example.org"))
    }

    @Test("a name's part keeps the current name's other parts")
    func nameParts() throws {
        var current = AccountDetails()
        current[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
        let details = try Self.schema.details(fromAssignments: ["name.middleName=King"], current: current)
        #expect(details[\.name] == PersonName(givenName: "Ada", middleName: "King", familyName: "Lovelace"))
        #expect(KontoSchema.setsParts(["name.middleName=King"]))
        #expect(!KontoSchema.setsParts(["email=a.b@example.org"]))
    }

    @Test("unusable assignments are refused with the reason", arguments: [
        ("favouriteColour=blue", "unknown key 'favouriteColour'"),
        ("=x", "'=x' is not KEY=VALUE"),
        ("dateOfBirth", "'dateOfBirth' is not KEY=VALUE"),
        ("newsletter=maybe", "'newsletter' is true or false, not 'maybe'"),
        ("visits=3.5", "'visits' is a whole number, not '3.5'"),
        ("height=tall", "'height' is a number, not 'tall'"),
        ("height=inf", "'height' is a number, not 'inf'"),
        ("email.local=ada", "only a name has parts"),
        ("name.title=Dr", "only a name has parts"),
        ("password=secret", "'password' is not changed with `account set`"),
        ("userId=someone@example.org", "'userId' is not changed with `account set`"),
        ("accountId=x", "unknown key 'accountId'"),
    ])
    func refused(assignment: String, reason: String) {
        #expect {
            try Self.schema.details(fromAssignments: [assignment])
        } throws: { error in
            (error as? KontoSchema.AssignmentError)?.description.contains(reason) == true
        }
    }

    @Test("only configured keys that a modification may remove are removable")
    func removable() throws {
        #expect(try Self.schema.removableKeys(["dateOfBirth", "phoneNumbers"]) == ["dateOfBirth", "phoneNumbers"])
        for key in ["userId", "password", "accountId", "favouriteColour"] {
            #expect(throws: KontoSchema.AssignmentError.self) { try Self.schema.removableKeys([key]) }
        }
    }
}
