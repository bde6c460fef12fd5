import HTTPTypes
import KontoContracts
import KontoErrors
import KontoWire
import NIOHTTP1

/// The refusals each operation can answer, declared in the served document status by status (401, 403, 404, 409,
/// 412, 422, 429) with the problem schema and the codes behind each, so a client generated from `/openapi.json` can
/// type them. openapi.yaml keeps one `default` problem per operation (the gateway's and KontoClient's generated
/// interfaces switch over it); the rest (400, 413, 415, 5xx) stay under that `default` here too.
///
/// The codes are not written twice: an operation's are those of the service methods it calls, as their contracts
/// declare them (`errorCodesByMethod`), with the gateway's own (a session's check, a verified address, its limits).
/// The consumer contract tests play every recorded error through HTTP and check that its status is declared here.
extension OpenAPIDocument {
    /// The statuses declared one by one; the others are the `default` problem's.
    static let declaredProblemStatuses: [Int] = [401, 403, 404, 409, 412, 422, 429]

    /// The service methods each operation calls (its session's check is added for the operations with `security`).
    static let upstreamMethods: [String: [String]] = [
        "signUp": [IdentityContract.signUp.name],
        "logIn": [IdentityContract.login.name],
        "logOutEverywhere": [IdentityContract.logoutEverywhere.name],
        "listAccountSessions": [IdentityContract.listSessions.name],
        "endAccountSession": [IdentityContract.endSession.name],
        "endOtherAccountSessions": [IdentityContract.endOtherSessions.name],
        "getMailPreferences": [IdentityContract.mailPreferences.name],
        "setMailPreferences": [IdentityContract.setMailPreferences.name],
        "exportAccount": [IdentityContract.exportAccount.name, ProfileContract.load.name, NotificationsContract.accountHistory.name],
        "requestEmailCode": [IdentityContract.requestEmailCode.name],
        "logInWithEmailCode": [IdentityContract.emailCodeLogin.name],
        "completeSecondFactor": [IdentityContract.completeSecondFactor.name],
        "listIdentityProviders": [IdentityContract.identityProviders.name],
        "externalAuthorization": [IdentityContract.externalAuthorization.name],
        "logInWithProvider": [IdentityContract.externalLogin.name],
        "listIdentities": [IdentityContract.listIdentities.name],
        "listApplications": [IdentityContract.openIDApplications.name],
        "revokeApplication": [IdentityContract.revokeOpenIDApplication.name],
        "linkIdentity": [IdentityContract.linkIdentity.name],
        "unlinkIdentity": [IdentityContract.unlinkIdentity.name],
        "listFactors": [IdentityContract.listFactors.name],
        "enrollTOTP": [IdentityContract.enrollTOTP.name],
        "confirmTOTP": [IdentityContract.confirmTOTP.name],
        "passkeyRegistrationOptions": [IdentityContract.passkeyRegistrationOptions.name],
        "registerPasskey": [IdentityContract.registerPasskey.name],
        "passkeyLoginOptions": [IdentityContract.passkeyLoginOptions.name],
        "passkeyLogIn": [IdentityContract.passkeyLogin.name],
        "removeFactor": [IdentityContract.removeFactor.name],
        "regenerateRecoveryCodes": [IdentityContract.regenerateRecoveryCodes.name],
        "signInAnonymously": [IdentityContract.signInAnonymously.name],
        "logOut": [IdentityContract.logout.name],
        "getAccount": [ProfileContract.load.name],
        "modifyAccount": [ProfileContract.modify.name, IdentityContract.requestEmailVerification.name],
        "deleteAccount": [IdentityContract.delete.name],
        "changePassword": [IdentityContract.changePassword.name],
        "changeUserId": [IdentityContract.changeUserId.name],
        "reauthenticate": [IdentityContract.reauthenticate.name],
        "accountEvents": [NotificationsContract.feed.name, NotificationsContract.tailCursor.name],
        "requestPasswordReset": [IdentityContract.requestPasswordReset.name],
        "requestEmailVerification": [IdentityContract.requestEmailVerification.name],
        "confirmEmailVerification": [IdentityContract.confirmEmailVerification.name],
        "confirmEmailVerificationCode": [IdentityContract.confirmEmailVerificationCode.name],
        "confirmPasswordReset": [IdentityContract.confirmPasswordReset.name],
        "getSchema": [],
        "live": [],
        "metrics": [],
        "ready": [],
    ]

    /// The operations a session of an unverified account may not use where addresses must be verified
    /// (``GatewayAPI/requireVerifiedAddress(_:)``).
    static let verifiedAddressOperations: Set<String> = [
        "modifyAccount", "enrollTOTP", "confirmTOTP", "regenerateRecoveryCodes", "passkeyRegistrationOptions", "registerPasskey", "linkIdentity",
    ]

    /// Probes are never rate-limited (``GatewayRateLimits``).
    static let unlimitedOperations: Set<String> = ["live", "metrics", "ready"]

    /// Every code `operationId` can answer with a declared status, in a stable order.
    static func problemCodes(operationId: String, authenticated: Bool) -> [KontoErrorCode] {
        let byMethod = IdentityContract.errorCodesByMethod
            .merging(ProfileContract.errorCodesByMethod) { first, _ in first }
            .merging(NotificationsContract.errorCodesByMethod) { first, _ in first }
        var methods = upstreamMethods[operationId] ?? []
        if authenticated { methods.insert(IdentityContract.validateSession.name, at: 0) }
        var codes = methods.flatMap { byMethod[$0] ?? [] }
        // An application's access token, presented where its scopes do not reach (``GatewayAPI/authenticate()``).
        if authenticated { codes.append(.requestInsufficientScope) }
        if verifiedAddressOperations.contains(operationId) { codes.append(.emailNotVerified) }
        if !unlimitedOperations.contains(operationId) { codes.append(.requestRateLimited) }
        var seen = Set<KontoErrorCode>()
        return codes.filter { declaredProblemStatuses.contains($0.httpStatus.code) && seen.insert($0).inserted }
    }

    /// Adds each operation's declared problem responses (a status the document already declares is left as written).
    static func describeProblems(in document: inout [String: Any]) {
        guard var paths = document["paths"] as? [String: Any] else { return }
        for (path, value) in paths {
            guard var item = value as? [String: Any] else { continue }
            for (method, value) in item {
                guard var operation = value as? [String: Any], let operationId = operation["operationId"] as? String,
                      var responses = operation["responses"] as? [String: Any]
                else { continue }
                let codes = problemCodes(operationId: operationId, authenticated: operation["security"] != nil)
                for status in declaredProblemStatuses {
                    let answering = codes.filter { $0.httpStatus.code == status }
                    guard !answering.isEmpty, responses[String(status)] == nil else { continue }
                    responses[String(status)] = problemResponse(status: status, codes: answering)
                }
                operation["responses"] = responses
                item[method] = operation
            }
            paths[path] = item
        }
        document["paths"] = paths
    }

    private static func problemResponse(status: Int, codes: [KontoErrorCode]) -> [String: Any] {
        let reason = HTTPResponseStatus(statusCode: status).reasonPhrase
        let list = codes.map { "[`\($0.rawValue)`](/problems/\($0.rawValue))" }.joined(separator: ", ")
        var response: [String: Any] = [
            "description": "\(reason): \(list).",
            "content": ["application/problem+json": ["schema": ["$ref": "#/components/schemas/Problem"]]],
        ]
        if status == 429 || codes.contains(.throttled) {
            response["headers"] = ["Retry-After": ["$ref": "#/components/headers/RetryAfter"]]
        }
        return response
    }
}
