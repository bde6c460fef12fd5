import Synchronization

/// Why a session ended, kept beside its channel: a mail written after the session closed (a refusal at sign-in ends
/// the connection while ``SMTPClient/send(_:)`` is still writing its mail) fails on the closed channel, and the
/// courier needs the session's reason (credentials refused: the deployment's to fix), not the channel's.
final class SMTPSessionEnd: Sendable {
    private let reason = Mutex<MailError?>(nil)

    /// Keeps the first reason: what ended the session, not what followed from it.
    func record(_ error: MailError) {
        reason.withLock { if $0 == nil { $0 = error } }
    }

    var error: MailError? { reason.withLock { $0 } }
}
