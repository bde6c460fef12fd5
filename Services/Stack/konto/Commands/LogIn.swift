import ArgumentParser
import Foundation
import KontoClient
import KontoModel

/// `konto login USERID` (password asked for), `konto login --email-code USERID` (a code mailed, then asked for),
/// `konto login --provider NAME --nonce NONCE` (a provider's ID token read), or `konto login --anonymous`.
struct LogIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in and keep the session for the other commands.",
        discussion: "The password is read from the terminal without echo, or from standard input's first line. With --email-code a code is mailed to the userId instead (where the deployment offers it) and read the same way. An account with a second factor is then asked for a code from its authenticator app (or a recovery code), the same way (the next line of standard input)."
    )

    @OptionGroup var options: GatewayOptions
    @Argument(help: "The account's userId.") var userId: String?
    @Flag(help: "Sign in as a new anonymous account instead (`konto signup` later keeps it).") var anonymous = false
    @Flag(help: "Sign in with a code mailed to the userId instead of the password.") var emailCode = false
    @Option(help: "Sign in with this identity provider's ID token instead (read like a password; with --nonce).") var provider: String?
    @Option(parsing: .unconditional, help: "The nonce the provider's ID token was minted for (with --provider).") var nonce: String?

    func validate() throws {
        if provider != nil {
            guard userId == nil, !anonymous, !emailCode, nonce != nil else {
                throw ValidationError("--provider takes --nonce, and no userId, --anonymous or --email-code")
            }
            return
        }
        guard nonce == nil else { throw ValidationError("--nonce goes with --provider") }
        guard (userId == nil) == anonymous else {
            throw ValidationError(anonymous ? "--anonymous takes no userId" : "which userId? (or --anonymous)")
        }
        guard !(anonymous && emailCode) else { throw ValidationError("--anonymous and --email-code exclude each other") }
    }

    func run() async throws {
        try await options.perform { client, output in
            if anonymous {
                let signIn = try await client.signInAnonymously()
                output.answer(
                    "Signed in anonymously (account \(signIn.session.accountId)).",
                    SignedIn(accountId: signIn.session.accountId, userId: nil, expiresAt: signIn.session.expiresAt)
                )
                return
            }
            if let provider, let nonce {
                let token = try Terminal.readSecret(prompt: "ID token from \(provider): ")
                let answer: KontoProviderSignIn
                do {
                    answer = try await client.logIn(provider: provider, idToken: token, nonce: nonce)
                } catch let challenged as KontoClientError where challenged.code == KontoClientError.Code.secondFactorRequired {
                    let signIn = try await Self.completeSecondFactor(client, challenged)
                    output.answer("Logged in (account \(signIn.session.accountId)).", SignedIn(accountId: signIn.session.accountId, userId: signIn.session.userId, expiresAt: signIn.session.expiresAt))
                    return
                }
                switch answer {
                case .signedIn(let signIn, let created):
                    output.answer(
                        "\(created ? "Signed up" : "Logged in") with \(provider) as \(signIn.session.userId ?? "?") (account \(signIn.session.accountId)).",
                        SignedIn(accountId: signIn.session.accountId, userId: signIn.session.userId, expiresAt: signIn.session.expiresAt)
                    )
                case .signUpRequired(let signUp):
                    throw KontoClientError(
                        code: AccountError.Code.missingAccountValue.rawValue, status: 202,
                        detail: "The account needs values the provider did not give: sign up in the web console or an app.", fields: signUp.missing
                    )
                }
                return
            }
            let userId = userId ?? ""
            let signIn: KontoSignIn
            do {
                if emailCode {
                    try await client.requestEmailCode(userId: userId)
                    Output.note("If an account has \(userId), a code is on its way to it (it works once, for 10 minutes).\n")
                    let code = try Terminal.readSecret(prompt: "Code from the mail: ").filter { !$0.isWhitespace }
                    signIn = try await client.logIn(userId: userId, emailCode: code)
                } else {
                    let password = try Terminal.readSecret(prompt: "Password for \(userId): ")
                    signIn = try await client.logIn(userId: userId, password: password)
                }
            } catch let challenged as KontoClientError where challenged.code == KontoClientError.Code.secondFactorRequired {
                signIn = try await Self.completeSecondFactor(client, challenged)
            }
            output.answer(
                "Logged in as \(userId) (account \(signIn.session.accountId)).",
                SignedIn(accountId: signIn.session.accountId, userId: userId, expiresAt: signIn.session.expiresAt)
            )
        }
    }
}

extension LogIn {
    /// Asks for the second factor a first factor's challenge is due (an app's code or a recovery code; a passkey is a
    /// browser's) and completes the login with it.
    static func completeSecondFactor(_ client: KontoClient, _ challenged: KontoClientError) async throws -> KontoSignIn {
        let challenge = try challenged.challenge ?? { throw challenged }()
        let passkeyOnly = "This account's second factor is a passkey, which a terminal cannot use"
        let prompt = switch (challenge.factors.contains("totp"), challenge.factors.contains("recoveryCode")) {
        case (true, true): "Code from the authenticator app (or a recovery code): "
        case (true, false): "Code from the authenticator app: "
        case (false, true): passkeyOnly + ": enter a recovery code (or sign in with the passkey in a browser): "
        case (false, false):
            throw KontoClientError(
                code: KontoClientError.Code.secondFactorRequired, status: 202,
                detail: passkeyOnly + ": sign in with it in a browser (the web console) or an app."
            )
        }
        let code = try Terminal.readSecret(prompt: prompt)
        // Six digits are an app's code; anything else (`xxxx-xxxx-xxxx`) a recovery code.
        let isAppCode = code.count == 6 && code.allSatisfy(\.isNumber)
        return try await client.completeLogIn(challenge: challenge, code: isAppCode ? code : nil, recoveryCode: isAppCode ? nil : code)
    }
}

/// What signing up or in answers in JSON.
struct SignedIn: Encodable {
    var accountId: String
    var userId: String?
    var expiresAt: Date
}
