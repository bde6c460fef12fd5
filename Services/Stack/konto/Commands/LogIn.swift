import ArgumentParser
import Foundation
import KontoClient

/// `konto login USERID` (password asked for), or `konto login --anonymous`.
struct LogIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in and keep the session for the other commands.",
        discussion: "The password is read from the terminal without echo, or from standard input's first line. An account with a second factor is then asked for a code from its authenticator app (or a recovery code), the same way (the next line of standard input)."
    )

    @OptionGroup var options: GatewayOptions
    @Argument(help: "The account's userId.") var userId: String?
    @Flag(help: "Sign in as a new anonymous account instead (`konto signup` later keeps it).") var anonymous = false

    func validate() throws {
        guard (userId == nil) == anonymous else {
            throw ValidationError(anonymous ? "--anonymous takes no userId" : "which userId? (or --anonymous)")
        }
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
            let userId = userId ?? ""
            let password = try Terminal.readSecret(prompt: "Password for \(userId): ")
            let signIn: KontoSignIn
            do {
                signIn = try await client.logIn(userId: userId, password: password)
            } catch let challenged as KontoClientError where challenged.code == KontoClientError.Code.secondFactorRequired {
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
                signIn = try await client.completeLogIn(challenge: challenge, code: isAppCode ? code : nil, recoveryCode: isAppCode ? nil : code)
            }
            output.answer(
                "Logged in as \(userId) (account \(signIn.session.accountId)).",
                SignedIn(accountId: signIn.session.accountId, userId: userId, expiresAt: signIn.session.expiresAt)
            )
        }
    }
}

/// What signing up or in answers in JSON.
struct SignedIn: Encodable {
    var accountId: String
    var userId: String?
    var expiresAt: Date
}
