import KontoModel
import NIOCore

/// The facts as a member of a direct-JSON payload (``IdentitySessionInfo``), with the members its `Codable` form has.
extension IdentityAccountFacts {
    init(wireJSON object: WireJSONObject) throws {
        self.init(
            accountId: try object.string("accountId"),
            userId: try object.optionalString("userId"),
            isAnonymous: try object.bool("isAnonymous"),
            emailVerified: try object.optionalBool("emailVerified"),
            verifiedEmail: try object.optionalString("verifiedEmail"),
            createdAt: try object.optionalTimestamp("createdAt")
        )
    }

    func writeWireJSON(into output: inout [UInt8]) {
        output.append(contentsOf: #"{"accountId":"#.utf8)
        AccountValue.writeJSONString(accountId, into: &output)
        if let userId {
            output.append(contentsOf: #","userId":"#.utf8)
            AccountValue.writeJSONString(userId, into: &output)
        }
        output.append(contentsOf: (isAnonymous ? #","isAnonymous":true"# : #","isAnonymous":false"#).utf8)
        if let emailVerified {
            output.append(contentsOf: (emailVerified ? #","emailVerified":true"# : #","emailVerified":false"#).utf8)
        }
        if let verifiedEmail {
            output.append(contentsOf: #","verifiedEmail":"#.utf8)
            AccountValue.writeJSONString(verifiedEmail, into: &output)
        }
        if let createdAt {
            output.append(contentsOf: #","createdAt":"#.utf8)
            AccountValue.writeJSONString(createdAt.description, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
