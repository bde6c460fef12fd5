import Foundation
import HTTPTypes
import KontoModel

/// The page a problem's `type` (`/problems/{code}`) leads to: what the code means, its HTTP status, whether the same
/// request may succeed later, and what to do. Only codes this build declares have one; the page quotes nothing of
/// the request.
enum ProblemTypePage {
    /// What the gateway's and the services' own codes mean; the account model's say it in their standard message.
    static let explanations: [KontoErrorCode: String] = [
        .requestMalformed: "The request is not one the API understands: a body that is not the JSON the operation takes, or a parameter out of its bounds. The detail says what.",
        .requestUnsupportedMediaType: "The body's Content-Type is not one the operation takes (application/json for the API; the console's forms are application/x-www-form-urlencoded).",
        .requestBodyTooLarge: "The body is larger than the gateway takes (KONTO_GATEWAY_MAX_BODY_BYTES).",
        .requestNotFound: "No route of the API has this path.",
        .requestMethodNotAllowed: "The path exists, but not with this method; the Allow header lists those it takes.",
        .requestRateLimited: "Too many requests from this address; wait for the seconds Retry-After gives.",
        .requestPreconditionFailed: "If-Match named a version the account no longer has: read it again, then send the change with the new ETag.",
        .requestInsufficientScope: "An application's OpenID access token reaches only what its scopes allow: GET /v1/account with profile and email. Everything else needs the owner's own session.",
        .gatewayServiceUnavailable: "A service behind the gateway is unavailable or late; try again shortly.",
        .gatewayUpstreamFailed: "A service behind the gateway failed to answer the request; try again, and tell the operator the request id if it persists.",
        .gatewayInternalError: "The gateway failed; tell the operator the request id.",
        .identityBusy: "Identity is at its limit of password checks at once; try again shortly.",
        .identityStorageUnavailable: "Identity cannot reach its database; try again shortly.",
        .identityStorageFailure: "Identity's database failed the request; tell the operator the request id.",
        .identityProfileUnavailable: "Identity cannot reach Profile for the account's details; try again shortly.",
        .identityProviderUnavailable: "The identity provider could not be reached; try again shortly.",
        .adminKeyRefused: "The operator key is malformed, unknown, wrong, expired or revoked.",
        .adminScopeMissing: "The operator key lacks the scope this action needs; nothing was done.",
        .adminKeyNotFound: "No operator key has this id.",
        .adminSessionNotFound: "The account has no session with this id.",
        .adminInvalidRequest: "The admin request asks for something Konto refuses; the problem's detail says what.",
        .adminClientNotFound: "No OpenID Provider client has this id.",
        .adminClientExists: "An OpenID Provider client has this id already (the clients file's or one added through the admin API).",
        .adminClientInFile: "The client is the deployment's clients file's: change it there.",
        .adminClientLimit: "As many clients as the deployment allows are registered through the admin API (KONTO_IDENTITY_OIDC_CLIENTS_MAX).",
        .adminLastKeyManager: "The key is the last live one holding keys:write; revoking it would leave no key that can manage keys. Make another first.",
        .profileAlreadyExists: "The account's profile exists already.",
        .profileValueTooLarge: "A value is larger than Profile keeps for one key.",
        .profileAccountTooLarge: "The account's details together are larger than Profile keeps for one account.",
        .profileStorageUnavailable: "Profile cannot reach its database; try again shortly.",
        .profileStorageFailure: "Profile's database failed the request; tell the operator the request id.",
        .notificationsStorageUnavailable: "Notifications cannot reach its database; try again shortly.",
        .notificationsStorageFailure: "Notifications' database failed the request; tell the operator the request id.",
    ]

    static func explanation(for code: KontoErrorCode) -> String {
        if let text = explanations[code] { return text }
        switch code.family {
        case .account: return AccountError(code: code).message
        case .wire: return "A service behind the gateway could not be reached or understood (\(code.rawValue)); try again shortly."
        default: return "A refusal of the \(code.family.rawValue) service; the problem's detail says what."
        }
    }

    /// The page, or nil for a code this build does not declare.
    static func html(for code: KontoErrorCode) -> String? {
        guard code.isKnown else { return nil }
        let status = code.httpStatus
        let retry = code.isRetryable ? "The same request may succeed later (after Retry-After, when given)." : "The same request will be refused again: change it first."
        // Every value here comes from this build's tables, never from the request.
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(code.rawValue)</title></head>
            <body><main id="problem-type">
            <h1><code>\(code.rawValue)</code></h1>
            <p id="problem-status">HTTP \(status.code) \(GatewayProblem.title(for: status))</p>
            <p id="problem-explanation">\(explanation(for: code))</p>
            <p id="problem-retry">\(retry)</p>
            <p>Every problem document carries this code, a detail and a request id: <a href="/openapi.json">the API document</a> lists where each is answered.</p>
            </main></body></html>
            """
    }
}
