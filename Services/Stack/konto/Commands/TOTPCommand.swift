import ArgumentParser

/// `konto totp enroll`: the authenticator app's enrolment under the name the issue tracker and other platforms use;
/// the same command as `konto factors totp`.
struct TOTPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "An authenticator app as the second factor (the same as `konto factors totp`).",
        subcommands: [Enroll.self]
    )

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll",
            abstract: Factors.TOTP.configuration.abstract,
            discussion: Factors.TOTP.configuration.discussion
        )
        @OptionGroup var options: GatewayOptions
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        func run() async throws {
            var enrol = Factors.TOTP()
            enrol.options = options
            enrol.currentPassword = currentPassword
            try await enrol.run()
        }
    }
}
