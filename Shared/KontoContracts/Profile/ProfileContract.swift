import KontoModel
import KontoWire

/// The Profile service's methods, declared once for the service and its consumers.
///
/// Profile is the storage provider for every account key that is not a credential
/// (SpeziAccount's AccountStorageProvider). Examples of every method and error, checked on both
/// sides, are in `Tests/Contracts/profile`.
public enum ProfileContract {
    public static let serviceName = "profile"
    /// Where the service listens unless configured otherwise, and where its callers look for it.
    public static let defaultPort = 7402
    /// Raised when a method's request or response changes incompatibly.
    public static let version = 1

    /// Stores the details of a new account; version 1. Refuses an accountId that exists.
    public static let create = WireMethod<ProfileCreateRequest, ProfileRecord>("profile.create")
    /// Loads the asked keys (all when `keys` is absent) with the account's version.
    public static let load = WireMethod<ProfileLoadRequest, ProfileRecord>("profile.load")
    /// Applies `{set, remove}` atomically; with `expectedVersion`, only if the account is still at it.
    public static let modify = WireMethod<ProfileModifyRequest, ProfileRecord>("profile.modify")
    /// Removes every value of the account. Idempotent: deleting twice, or an unknown account, succeeds.
    public static let delete = WireMethod<ProfileDeleteRequest, ProfileDeletion>("profile.delete")

    public static let methods = [create.name, load.name, modify.name, delete.name, HealthContract.check.name]

    /// Every code a Profile method may answer with, besides the wire layer's own (`wire.*`); each declared in KontoErrors.
    public static let errorCodes: [KontoErrorCode] = [
        .notFound,
        .validationFailed,
        .accountIdChanged,
        .mutatingNonMutableAccountKeys,
        .missingAccountValue,
        .userIdNotRemovable,
        .versionConflict,
    ] + KontoErrorCode.codes(of: .profile)

    /// The codes each method answers with (besides the wire layer's), as the store raises them; the union is
    /// ``errorCodes``. Each pair has a recorded example in `Tests/Contracts/profile` (the storage codes with the database
    /// stopped or its tables gone). Load and delete check nothing but the account's existence.
    public static let errorCodesByMethod: [String: [KontoErrorCode]] = {
        let limits: [KontoErrorCode] = [.profileValueTooLarge, .profileAccountTooLarge]
        let storage: [KontoErrorCode] = [.profileStorageUnavailable, .profileStorageFailure]
        return [
            create.name: [.validationFailed, .accountIdChanged, .missingAccountValue, .profileAlreadyExists] + limits + storage,
            load.name: [.notFound] + storage,
            modify.name: [.notFound, .versionConflict, .validationFailed, .accountIdChanged, .userIdNotRemovable, .mutatingNonMutableAccountKeys, .missingAccountValue] + limits + storage,
            delete.name: storage,
            // A report, never an error: an unreachable database is a check with status notReady.
            HealthContract.check.name: [],
        ]
    }()

    /// Declared pairs without a recorded example: none.
    public static let exemptions: [ContractExemption] = []

}
