import KontoModel
import KontoWire
import NIOCore

/// The answer to every session check, so it skips Foundation's JSON coders. The same members as its `Codable` form:
/// `account`, and the facts' fields as they travelled before it (written for an older gateway, read when `account` is
/// absent, from an older Identity).
extension IdentitySessionInfo: WireJSONCodable {
    public init(wireJSON bytes: ByteBufferView) throws {
        let object = try WireJSONObject(bytes)
        let account: IdentityAccountFacts
        if let facts = try object.optionalObject("account") {
            account = try IdentityAccountFacts(wireJSON: facts)
        } else {
            account = IdentityAccountFacts(
                accountId: try object.string("accountId"),
                userId: try object.optionalString("userId"),
                isAnonymous: try object.bool("isAnonymous"),
                emailVerified: try object.optionalBool("emailVerified"),
                verifiedEmail: try object.optionalString("verifiedEmail")
            )
        }
        var assuranceLevel: Int?
        if let level = try object.optionalInt64("assuranceLevel") {
            guard let level = Int(exactly: level) else { throw WireJSONObject.MemberError(member: "assuranceLevel") }
            assuranceLevel = level
        }
        self.init(
            account: account,
            sessionId: try object.string("sessionId"),
            expiresAt: try object.timestamp("expiresAt"),
            privilegedUntil: try object.optionalTimestamp("privilegedUntil"),
            assuranceLevel: assuranceLevel
        )
    }

    public func writeWireJSON(into output: inout [UInt8]) throws {
        output.append(contentsOf: #"{"account":"#.utf8)
        account.writeWireJSON(into: &output)
        output.append(contentsOf: #","sessionId":"#.utf8)
        AccountValue.writeJSONString(sessionId, into: &output)
        output.append(contentsOf: #","expiresAt":"#.utf8)
        AccountValue.writeJSONString(expiresAt.description, into: &output)
        if let privilegedUntil {
            output.append(contentsOf: #","privilegedUntil":"#.utf8)
            AccountValue.writeJSONString(privilegedUntil.description, into: &output)
        }
        if let assuranceLevel {
            output.append(contentsOf: #","assuranceLevel":"#.utf8)
            output.append(contentsOf: String(assuranceLevel).utf8)
        }
        // The facts' fields as they travelled before `account`, for an older gateway.
        output.append(contentsOf: #","accountId":"#.utf8)
        AccountValue.writeJSONString(account.accountId, into: &output)
        output.append(contentsOf: (account.isAnonymous ? #","isAnonymous":true"# : #","isAnonymous":false"#).utf8)
        if let userId = account.userId {
            output.append(contentsOf: #","userId":"#.utf8)
            AccountValue.writeJSONString(userId, into: &output)
        }
        if let emailVerified = account.emailVerified {
            output.append(contentsOf: (emailVerified ? #","emailVerified":true"# : #","emailVerified":false"#).utf8)
        }
        if let verifiedEmail = account.verifiedEmail {
            output.append(contentsOf: #","verifiedEmail":"#.utf8)
            AccountValue.writeJSONString(verifiedEmail, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
