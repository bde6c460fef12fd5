import KontoContracts
import KontoModel
import Logging

/// What every part of Identity reads and none owns: the deployment's account rules, Identity's options, the clock
/// and the logger. Values only; each part's collaborators are its own stored properties.
struct IdentityContext: Sendable {
    let configuration: AccountConfiguration
    let options: IdentityOptions
    /// What login and sign-up answer with: the account as every path puts it together.
    let assembler: AccountAssembler
    /// The current time; tests move it to expire sessions and tokens.
    let clock: @Sendable () -> Timestamp
    let logger: Logger

    init(configuration: AccountConfiguration, options: IdentityOptions, clock: @escaping @Sendable () -> Timestamp, logger: Logger) {
        self.configuration = configuration
        self.options = options
        self.assembler = AccountAssembler(configuration: configuration)
        self.clock = clock
        self.logger = logger
    }
}
