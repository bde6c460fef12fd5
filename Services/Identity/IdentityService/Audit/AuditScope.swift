import KontoContracts
import Synchronization

/// Who is acting in the wire call being served, for the audit entries its changes make. The storage reads it where it
/// writes a change's events and appends their entries in the same transaction, so no call site has to pass them on
/// (as swift-distributed-tracing's ServiceContext carries a span through the calls below it). Set once per call by
/// ``IdentityStore/register(on:)``; absent, the change is Identity's own (retention, clean-ups).
final class AuditScope: Sendable {
    @TaskLocal static var current: AuditScope?

    /// The Identity method served (`login`, `disableAccount`, …).
    let operation: String
    let clientAddress: String?
    /// What the client calls itself (its User-Agent, as the gateway passed it), for a session the call makes.
    let clientName: String?
    private let operatorKey = Mutex<String?>(nil)
    private let noted = Mutex<[String: String]>([:])

    init(operation: String, clientAddress: String?, clientName: String? = nil) {
        self.operation = operation
        self.clientAddress = clientAddress.flatMap { $0.isEmpty ? nil : String($0.prefix(100)) }
        self.clientName = SessionClient.name(clientName)
    }

    /// The operator key the call was authorized with, once it was.
    var operatorKeyId: String? { operatorKey.withLock { $0 } }

    func authorized(operatorKeyId: String) {
        operatorKey.withLock { $0 = operatorKeyId }
    }

    /// Facts the call learnt while it ran (what an update changed), for its admin entry; never a secret.
    func note(_ facts: [String: String]) {
        noted.withLock { $0.merge(facts) { _, new in new } }
    }

    var notedFacts: [String: String] { noted.withLock { $0 } }

    /// Who changed `accountId` in this scope: the operator, once one was authorized, else the account itself.
    func actor(changing accountId: String) -> (type: AuditActorType, id: String?) {
        if let key = operatorKeyId { return (.operator, key) }
        return (.account, accountId)
    }

    /// The personal data every entry of the call carries: the client's address.
    var personal: [String: String] {
        clientAddress.map { ["clientAddress": $0] } ?? [:]
    }
}
