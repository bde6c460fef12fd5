import KontoContracts
import KontoModel

/// Identity's clean-ups and retention, run by its periodic jobs.
struct IdentityMaintenance: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
}
