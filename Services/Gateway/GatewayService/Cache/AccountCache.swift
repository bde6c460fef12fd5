import Crypto
import Foundation
import KontoContracts
import KontoModel
import Synchronization

/// Session checks and account details the gateway has seen, so a `GET /v1/account` need not ask Identity and
/// Profile every time (SpeziAccount's AccountDetailsCache, on the server).
///
/// Never stale by design, not by timing:
/// - It serves only while it is *live*: while ``AccountCacheInvalidator`` follows Notifications' tail of account
///   events. Going live or leaving it empties the cache, so nothing read before the tail started is kept.
/// - Every event drops what the cache holds for its account, and so does the gateway itself after any change it
///   passes on (logout, password, userId, deletion, details), before it answers.
/// - A value is stored only if nothing of its account (or token) was dropped since the read began: a read takes a
///   ``Ticket`` before asking the service, and ``store`` refuses the value when an invalidation came after it (else a
///   read racing a logout could put the old answer back after the logout's event).
/// - Entries live at most `timeToLive` (below Identity's once-a-minute session touch, so active sessions stay
///   active), never past the session's own expiry, and the cache holds at most `capacity` sessions and as many
///   accounts. Tokens are kept only as SHA-256 digests.
final class AccountCache: Sendable {
    struct Configuration: Sendable {
        /// How long an entry is served; zero turns the cache off.
        var timeToLive: Duration
        /// Sessions kept at most, and accounts kept at most.
        var capacity: Int

        init(timeToLive: Duration, capacity: Int) {
            self.timeToLive = timeToLive
            self.capacity = max(capacity, 1)
        }
    }

    /// Taken before a read from a service; the read's answer may be stored only under it.
    struct Ticket: Sendable {
        fileprivate let epoch: UInt64
        fileprivate let generation: UInt64
        fileprivate let takenAt: ContinuousClock.Instant
    }

    /// A token's key in the cache.
    struct TokenKey: Hashable, Sendable {
        fileprivate let digest: SHA256Digest

        init(_ token: String) {
            digest = SHA256.hash(data: Array(token.utf8))
        }
    }

    struct CachedAccount: Sendable {
        var account: Components.Schemas.Account
        var version: Int64
        /// `account` as the generated handler's response body encodes it, encoded once when stored (see
        /// ``CachedAccountMiddleware``).
        var json: [UInt8]
        /// Identity's facts in `account`: from the session it was read with.
        var facts: IdentityAccountFacts

        init(account: Components.Schemas.Account, version: Int64, facts: IdentityAccountFacts) throws {
            self.account = account
            self.version = version
            self.facts = facts
            self.json = Array(try Self.encoder.encode(account))
        }

        /// Whether it answers for `session`: only while Identity's facts are those it was assembled with. The account
        /// cached before an anonymous account's sign-up, or before a userId change or a confirmation whose event has not
        /// arrived yet, does not.
        func matches(_ session: IdentitySessionInfo) -> Bool {
            facts == session.account
        }

        /// The OpenAPI runtime's body encoder as the gateway configures it (`jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]`);
        /// an account has no dates, so its date strategy does not come into it. A test compares the two answers.
        static let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return encoder
        }()
    }

    private struct SessionEntry {
        var session: IdentitySessionInfo
        var storedAt: ContinuousClock.Instant
    }

    private struct AccountEntry {
        var account: CachedAccount
        var storedAt: ContinuousClock.Instant
    }

    private enum Subject: Hashable {
        case account(String)
        case token(TokenKey)
    }

    private struct State {
        var live = false
        /// Raised whenever the cache is emptied: tickets from before cannot store.
        var epoch: UInt64 = 0
        /// Raised by every invalidation; `invalidated` keeps the value of each subject's latest.
        var generation: UInt64 = 0
        var sessions: [TokenKey: SessionEntry] = [:]
        var tokensByAccount: [String: Set<TokenKey>] = [:]
        var accounts: [String: AccountEntry] = [:]
        var invalidated: [Subject: UInt64] = [:]
        /// `invalidated`'s entries in the order they were made, to forget those older than any usable ticket.
        var invalidationLog: [(at: ContinuousClock.Instant, subject: Subject, generation: UInt64)] = []
        var logStart = 0

        mutating func empty() {
            epoch &+= 1
            sessions.removeAll()
            tokensByAccount.removeAll()
            accounts.removeAll()
            invalidated.removeAll()
            invalidationLog.removeAll()
            logStart = 0
        }

        mutating func removeSession(_ key: TokenKey) {
            guard let entry = sessions.removeValue(forKey: key) else { return }
            let accountId = entry.session.accountId
            tokensByAccount[accountId]?.remove(key)
            if tokensByAccount[accountId]?.isEmpty == true { tokensByAccount[accountId] = nil }
        }

        mutating func invalidate(_ subject: Subject, at now: ContinuousClock.Instant) {
            generation &+= 1
            invalidated[subject] = generation
            invalidationLog.append((now, subject, generation))
            switch subject {
            case .account(let accountId):
                accounts[accountId] = nil
                for key in tokensByAccount[accountId] ?? [] { sessions[key] = nil }
                tokensByAccount[accountId] = nil
            case .token(let key):
                removeSession(key)
            }
        }

        /// Whether something of `subjects` was invalidated after `ticket` was taken.
        func invalidated(since ticket: Ticket, _ subjects: Subject...) -> Bool {
            subjects.contains { (invalidated[$0] ?? 0) > ticket.generation }
        }

        /// Forgets invalidations older than `horizon`: tickets that old are refused anyway.
        mutating func forget(before horizon: ContinuousClock.Instant) {
            while logStart < invalidationLog.count, invalidationLog[logStart].at < horizon {
                let entry = invalidationLog[logStart]
                if invalidated[entry.subject] == entry.generation { invalidated[entry.subject] = nil }
                logStart += 1
            }
            if logStart > 1_024, logStart * 2 > invalidationLog.count {
                invalidationLog.removeFirst(logStart)
                logStart = 0
            }
        }
    }

    let configuration: Configuration
    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant
    private let wallClock: @Sendable () -> Date

    /// A ticket older than this cannot store (its read took longer than any service call may).
    private let ticketLifetime: Duration

    init(
        configuration: Configuration,
        ticketLifetime: Duration = .seconds(60),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.ticketLifetime = ticketLifetime
        self.now = now
        self.wallClock = wallClock
    }

    var isEnabled: Bool { configuration.timeToLive > .zero }

    /// Starts or stops serving; either way the cache is emptied (what it held was not covered by the tail).
    func setLive(_ live: Bool) {
        state.withLock { state in
            state.empty()
            state.live = live && isEnabled
        }
    }

    /// Empties the cache (a change whose account the gateway cannot name, e.g. a password reset).
    func removeAll() {
        state.withLock { $0.empty() }
    }

    /// A ticket for a read whose answer may be stored; nil while the cache is not live.
    func ticket() -> Ticket? {
        let now = now()
        return state.withLock { state in
            guard state.live else { return nil }
            return Ticket(epoch: state.epoch, generation: state.generation, takenAt: now)
        }
    }

    // MARK: Sessions

    func session(for token: TokenKey) -> IdentitySessionInfo? {
        let now = now()
        let wall = wallClock()
        return state.withLock { state in
            guard state.live, let entry = state.sessions[token] else { return nil }
            guard now < entry.storedAt + configuration.timeToLive, entry.session.expiresAt.date > wall else {
                state.removeSession(token)
                return nil
            }
            return entry.session
        }
    }

    func store(_ session: IdentitySessionInfo, for token: TokenKey, ticket: Ticket) {
        let now = now()
        state.withLock { state in
            guard state.live, ticket.epoch == state.epoch, now - ticket.takenAt < ticketLifetime,
                  !state.invalidated(since: ticket, .account(session.accountId), .token(token))
            else { return }
            if state.sessions[token] == nil, state.sessions.count >= configuration.capacity, let evicted = state.sessions.keys.first {
                state.removeSession(evicted)
            }
            state.removeSession(token)
            state.sessions[token] = SessionEntry(session: session, storedAt: now)
            state.tokensByAccount[session.accountId, default: []].insert(token)
            state.forget(before: now - ticketLifetime)
        }
    }

    /// The account a cached session belongs to, if the token's session is cached.
    func accountId(for token: TokenKey) -> String? {
        state.withLock { $0.sessions[token]?.session.accountId }
    }

    // MARK: Accounts

    func account(_ accountId: String) -> CachedAccount? {
        let now = now()
        return state.withLock { state in
            guard state.live, let entry = state.accounts[accountId] else { return nil }
            guard now < entry.storedAt + configuration.timeToLive else {
                state.accounts[accountId] = nil
                return nil
            }
            return entry.account
        }
    }

    func store(_ account: CachedAccount, ticket: Ticket) {
        let now = now()
        let accountId = account.account.accountId
        state.withLock { state in
            guard state.live, ticket.epoch == state.epoch, now - ticket.takenAt < ticketLifetime,
                  !state.invalidated(since: ticket, .account(accountId))
            else { return }
            if state.accounts[accountId] == nil, state.accounts.count >= configuration.capacity, let evicted = state.accounts.keys.first {
                state.accounts[evicted] = nil
            }
            state.accounts[accountId] = AccountEntry(account: account, storedAt: now)
            state.forget(before: now - ticketLifetime)
        }
    }

    // MARK: Invalidation

    /// Drops the account's sessions and details; reads begun before cannot store theirs.
    func invalidate(accountId: String) {
        let now = now()
        state.withLock { $0.invalidate(.account(accountId), at: now) }
    }

    /// Drops the token's session (and, if it is cached, everything of its account).
    func invalidate(token: TokenKey) {
        let now = now()
        state.withLock { state in
            if let accountId = state.sessions[token]?.session.accountId {
                state.invalidate(.account(accountId), at: now)
            }
            state.invalidate(.token(token), at: now)
        }
    }

    var counts: (sessions: Int, accounts: Int) {
        state.withLock { ($0.sessions.count, $0.accounts.count) }
    }
}
