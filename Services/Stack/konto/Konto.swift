import ArgumentParser
import Foundation
import KontoPostgres
import KontoRuntime
import KontoStack
import Logging

/// `konto`: the dev stack, and the account commands against a gateway (the local stack unless told otherwise).
@main
struct Konto: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "konto",
        abstract: "Konto, a self-hosted account backend.",
        discussion: """
            Account commands talk to --gateway (default $KONTO_GATEWAY, else http://127.0.0.1:8080) and keep the \
            session in a file only you can read. Passwords are read from the terminal without echo, or from \
            standard input (one per line) when it is not a terminal; never from the command line.

            Exit status: 0 done; 1 the gateway refused; 2 not signed in (or the session ended); 3 the gateway is \
            not reachable or not a Konto gateway; 64 unusable command line or input.
            """,
        subcommands: [
            Stack.self, SignUp.self, LogIn.self, LogOut.self, WhoAmI.self, AccountCommand.self, Password.self,
            UserId.self, Delete.self, Reauthenticate.self, Factors.self, Sessions.self, MailPreferences.self, Export.self, Identities.self, Applications.self, TOTPCommand.self, VerifyEmail.self, Schema.self, Events.self,
            Health.self, Keys.self, Admin.self,
        ]
    )
}

