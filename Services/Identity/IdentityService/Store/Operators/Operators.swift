import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

/// The operators' part (docs/ADMIN.md): operator keys (made, listed, revoked, checked on every admin call) and what
/// an operator reads about accounts. Every admin method carries the key as presented and checks it here, whoever
/// forwards it: a caller holding the gateway's wire key but no operator key gets nothing from these methods.
struct Operators: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let sessions: SessionAuthority

    /// Compared against when the key's id is unknown, so an unknown id costs what a wrong secret does.
    private static let absentHash = [UInt8](repeating: 0, count: 32)

    /// The key presented, if it is valid now and holds `scope` (nil: any valid key). Refusals: `admin.keyRefused` for
    /// a malformed, unknown, wrong, expired or revoked key alike (each counted against the client's address, which
    /// is throttled as sign-ins are), `admin.scopeMissing` for a valid key without the scope.
    func authorize(_ call: IdentityOperatorCall, scope: OperatorScope?) async throws(ServiceError) -> StoredOperatorKey {
        let now = clock()
        let throttleKeys = call.clientAddress.flatMap { $0.isEmpty ? nil : ["operator:" + SessionAuthority.hex(sessions.factorSecrets.clientDigest("address:" + $0))] } ?? []
        if !throttleKeys.isEmpty {
            try await sessions.checkThrottle(throttleKeys, at: now)
        }
        let presented = OperatorKeyText(parsing: call.key.value)
        var found: StoredOperatorKey?
        if let presented {
            found = try await stored { () async throws(IdentityStorageError) in try await storage.operatorKey(id: presented.keyId) }
        }
        let hash = Array(SHA256.hash(data: presented?.secret ?? []))
        let matches = ConstantTime.equal(hash, found?.secretHash ?? Self.absentHash)
        guard presented != nil, let key = found, matches, key.revokedAt == nil, key.expiresAt.map({ now < $0 }) ?? true else {
            if !throttleKeys.isEmpty {
                try await sessions.recordFailure(throttleKeys, at: now)
            }
            logger.notice("Operator key refused", metadata: ["konto.operator_key_id": "\(found?.id ?? "none")"])
            throw Self.keyRefused
        }
        // The call's audit entries name the key (refused for its scope or not: it was used).
        AuditScope.current?.authorized(operatorKeyId: key.id)
        // A key refused for its scope was used all the same: its last use shows.
        if key.lastUsedAt.map({ !(now < $0.adding(options.operatorKeyTouchInterval)) }) ?? true {
            try await stored { () async throws(IdentityStorageError) in try await storage.touchOperatorKey(id: key.id, at: now) }
        }
        guard scope.map(key.scopes.contains) ?? true else {
            throw ServiceError(code: .adminScopeMissing, message: "The operator key lacks the scope \(scope?.rawValue ?? "") this action needs.")
        }
        return key
    }

    static var keyRefused: ServiceError {
        ServiceError(code: .adminKeyRefused, message: "The operator key is malformed, unknown, wrong, expired or revoked.")
    }

    static func invalid(_ message: String) -> ServiceError {
        ServiceError(code: .adminInvalidRequest, message: message)
    }


    // MARK: Keys

    func operatorAuthorize(_ request: IdentityOperatorAuthorizeRequest) async throws(ServiceError) -> IdentityOperator {
        let key = try await authorize(request.operatorCall, scope: request.scope)
        return IdentityOperator(keyId: key.id, name: key.name, scopes: key.scopes)
    }

    func createOperatorKey(_ request: IdentityCreateOperatorKeyRequest) async throws(ServiceError) -> IdentityOperatorKeyCreated {
        let creator = try await authorize(request.operatorCall, scope: .keysWrite)
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...IdentityCreateOperatorKeyRequest.maximumNameLength).contains(name.count) else {
            throw Self.invalid("A key's name has 1 to \(IdentityCreateOperatorKeyRequest.maximumNameLength) characters.")
        }
        // Bounded as the document says (schemathesis sent duplicates beyond it): each scope at most once.
        guard request.scopes.count <= OperatorScope.allCases.count else {
            throw Self.invalid("A key lists at most \(OperatorScope.allCases.count) scopes.")
        }
        let scopes = Array(Set(request.scopes)).sorted()
        guard !scopes.isEmpty else { throw Self.invalid("A key needs at least one scope.") }
        let beyond = scopes.filter { !creator.scopes.contains($0) }
        guard beyond.isEmpty else {
            throw Self.invalid("A key cannot grant scopes it does not hold: \(beyond.map(\.rawValue).joined(separator: ", ")).")
        }
        let now = clock()
        if let expiresAt = request.expiresAt, !(now < expiresAt) {
            throw Self.invalid("The expiry is in the past.")
        }
        return try await Self.create(name: name, scopes: scopes, expiresAt: request.expiresAt, createdBy: creator.id, at: now, in: storage)
    }

    /// The bootstrap key's record: every scope, made by no one.
    static func bootstrapRecord(_ text: OperatorKeyText, at now: Timestamp) -> StoredOperatorKey {
        StoredOperatorKey(id: text.keyId, name: "bootstrap", scopes: OperatorScope.allCases, secretHash: Array(SHA256.hash(data: text.secret)), createdAt: now)
    }

    /// Makes and stores a key (also the command line's way, against the database, and the bootstrap's).
    static func create(
        name: String, scopes: [OperatorScope], expiresAt: Timestamp?, createdBy: String?, at now: Timestamp, in storage: any OperatorStorage,
        text: OperatorKeyText = .generate(), onlyIfNone: Bool = false
    ) async throws(ServiceError) -> IdentityOperatorKeyCreated {
        let key = StoredOperatorKey(
            id: text.keyId, name: name, scopes: scopes, secretHash: Array(SHA256.hash(data: text.secret)), createdAt: now, createdBy: createdBy,
            expiresAt: expiresAt
        )
        let created: Bool
        do {
            created = try await storage.createOperatorKey(key, onlyIfNone: onlyIfNone)
        } catch {
            throw Self.error(for: error)
        }
        guard created || onlyIfNone else { throw Self.invalid("A key with this id exists already.") }
        return IdentityOperatorKeyCreated(key: key.listed, secret: BearerToken(text.text))
    }

    func listOperatorKeys(_ request: IdentityOperatorKeysRequest) async throws(ServiceError) -> IdentityOperatorKeys {
        _ = try await authorize(request.operatorCall, scope: .keysWrite)
        let keys = try await stored { () async throws(IdentityStorageError) in try await storage.operatorKeys() }
        return IdentityOperatorKeys(keys: keys.map(\.listed))
    }

    /// Revokes a key whose every scope the revoking key holds (a narrower key cannot take a stronger one away), never
    /// the last live key holding keys:write (the deployment would be left without a way to manage keys).
    func revokeOperatorKey(_ request: IdentityOperatorKeyRequest) async throws(ServiceError) -> IdentityDone {
        let revoker = try await authorize(request.operatorCall, scope: .keysWrite)
        let now = clock()
        let keyId = request.keyId
        let notFound = ServiceError(code: .adminKeyNotFound, message: "No operator key has this id.")
        guard let target = try await stored({ () async throws(IdentityStorageError) in try await storage.operatorKey(id: keyId) }) else { throw notFound }
        // A key's scopes never change, so this check holds until the revocation below.
        let beyond = Set(target.scopes).subtracting(revoker.scopes)
        guard beyond.isEmpty else {
            throw ServiceError(
                code: .adminScopeMissing,
                message: "A key can revoke only keys whose scopes it holds; this one also has \(beyond.sorted().map(\.rawValue).joined(separator: ", "))."
            )
        }
        switch try await stored({ () async throws(IdentityStorageError) in try await storage.revokeOperatorKey(id: keyId, at: now) }) {
        case .revoked: return IdentityDone()
        case .notFound: throw notFound
        case .lastKeyManager:
            throw ServiceError(code: .adminLastKeyManager, message: "This is the last live key holding keys:write; make another before revoking it.")
        }
    }

    /// Installs ``IdentityOptions/bootstrapOperatorKey`` when no key exists yet. Returns whether it did.
    @discardableResult
    func installBootstrapKey() async throws(ServiceError) -> Bool {
        guard let text = options.bootstrapOperatorKey else { return false }
        let before = try await stored { () async throws(IdentityStorageError) in try await storage.operatorKey(id: text.keyId) }
        guard before == nil else { return false }
        _ = try await Self.create(
            name: "bootstrap", scopes: OperatorScope.allCases, expiresAt: nil, createdBy: nil, at: clock(), in: storage, text: text, onlyIfNone: true
        )
        let after = try await stored { () async throws(IdentityStorageError) in try await storage.operatorKey(id: text.keyId) }
        if after != nil { logger.notice("Bootstrap operator key installed", metadata: ["konto.operator_key_id": "\(text.keyId)"]) }
        return after != nil
    }

    // MARK: Accounts

    func searchAccounts(_ request: IdentityAccountSearchRequest) async throws(ServiceError) -> IdentityAccountSearchPage {
        _ = try await authorize(request.operatorCall, scope: .accountsRead)
        let limit = request.limit ?? 50
        guard (1...IdentityAccountSearchRequest.maximumLimit).contains(limit) else {
            throw Self.invalid("The limit is 1 to \(IdentityAccountSearchRequest.maximumLimit).")
        }
        for text in [request.userIdPrefix, request.userIdContains, request.provider].compactMap({ $0 }) {
            guard (1...IdentityAccountSearchRequest.maximumQueryLength).contains(text.count) else {
                throw Self.invalid("A search text has 1 to \(IdentityAccountSearchRequest.maximumQueryLength) characters.")
            }
            // PostgreSQL's text holds no NUL (found by schemathesis: it failed the query); no userId has one either.
            guard !text.unicodeScalars.contains("\u{0}") else { throw Self.invalid("A search text has no NUL character.") }
        }
        var after: AccountSearchPosition?
        if let cursor = request.cursor {
            guard let position = AccountSearchCursor.decode(cursor) else { throw Self.invalid("The cursor is not one Konto gave.") }
            after = position
        }
        let search = AccountSearch(
            userIdPrefix: request.userIdPrefix.map { Self.folded($0) }, userIdContains: request.userIdContains.map { Self.folded($0) },
            verified: request.verified, disabled: request.disabled, anonymous: request.anonymous, createdAfter: request.createdAfter, createdBefore: request.createdBefore,
            hasSecondFactor: request.hasSecondFactor, provider: request.provider, after: after, limit: limit
        )
        let result = try await stored { () async throws(IdentityStorageError) in
            try await storage.searchAccounts(search, countLimit: IdentityAccountSearchPage.exactCountLimit)
        }
        // A full page may have more after it; the cursor is its last account.
        let next = result.accounts.count == limit ? result.accounts.last.map {
            AccountSearchCursor.encode(AccountSearchPosition(createdAt: $0.createdAt, accountId: $0.accountId))
        } : nil
        return IdentityAccountSearchPage(accounts: result.accounts, nextCursor: next, totalEstimate: result.total, totalIsExact: result.totalIsExact)
    }

    /// Disables an account (docs/ADMIN.md): every session ends, no sign-in succeeds (each refused as a wrong credential
    /// would be), no reset or sign-in code is mailed; `accountDisabled` (and `sessionsRevoked` when sessions ended) in
    /// the same transaction. Again on a disabled account: nothing changes, no event.
    func disableAccount(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone {
        try await setDisabled(request, true)
    }

    func enableAccount(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone {
        try await setDisabled(request, false)
    }

    private func setDisabled(_ request: IdentityOperatorAccountRequest, _ disabled: Bool) async throws(ServiceError) -> IdentityDone {
        let key = try await authorize(request.operatorCall, scope: .accountsWrite)
        let now = clock()
        let accountId = request.accountId
        var events = [event(accountId, disabled ? .accountDisabled : .accountEnabled, at: now)]
        if disabled { events.append(event(accountId, .sessionsRevoked, at: now)) }
        let outcome = try await stored { () async throws(IdentityStorageError) in
            try await storage.setAccountDisabled(accountId: accountId, disabled: disabled, at: now, events: events)
        }
        switch outcome {
        case .notFound:
            throw ServiceError(AccountError(code: .notFound))
        case .unchanged:
            return IdentityDone(eventIds: [])
        case .changed(let ended):
            logger.notice(disabled ? "Account disabled by an operator" : "Account enabled by an operator", metadata: [
                "konto.account_id": "\(accountId)", "konto.operator_key_id": "\(key.id)", "konto.sessions_ended": "\(ended)",
            ])
            return IdentityDone(eventIds: events.map(\.id))
        }
    }

    /// The account's live sessions (never a token).
    func accountSessions(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityAccountSessions {
        _ = try await authorize(request.operatorCall, scope: .accountsRead)
        let now = clock()
        guard let sessions = try await stored({ () async throws(IdentityStorageError) in try await storage.accountSessions(accountId: request.accountId) }) else {
            throw ServiceError(AccountError(code: .notFound))
        }
        return IdentityAccountSessions(sessions: sessions.filter { $0.isValid(at: now) }.map { $0.summary() })
    }

    /// Ends one of the account's sessions (`sessionsRevoked`… as its owner's logout would: `disassociatingAccount`), or
    /// all of them (`sessionsRevoked` and `disassociatingAccount`), naming the events for the caches.
    func endAccountSessions(_ request: IdentityEndAccountSessionsRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let key = try await authorize(request.operatorCall, scope: .sessionsWrite)
        let now = clock()
        let accountId = request.accountId
        guard let sessions = try await stored({ () async throws(IdentityStorageError) in try await storage.accountSessions(accountId: accountId) }) else {
            throw ServiceError(AccountError(code: .notFound))
        }
        let written = WrittenEvents()
        let ended: Int
        if let sessionId = request.sessionId {
            // Only a session of this account: another account's id is not found here.
            guard sessions.contains(where: { $0.id == sessionId }) else {
                throw ServiceError(code: .adminSessionNotFound, message: "The account has no such session.")
            }
            ended = try await self.sessions.end(sessionId: sessionId, of: accountId, at: now, written: written) ? 1 : 0
        } else {
            ended = try await self.sessions.endSessions(of: accountId, keeping: nil, at: now, written: written)
        }
        logger.notice("Sessions ended by an operator", metadata: [
            "konto.account_id": "\(accountId)", "konto.operator_key_id": "\(key.id)", "konto.sessions_ended": "\(ended)",
        ])
        return IdentitySessionsEnded(sessionsEnded: ended, accountId: accountId, eventIds: ended > 0 ? written.ids : nil)
    }

    /// A search text as userIds are compared with it: trimmed, composed (NFC), lowercased.
    static func folded(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping.lowercased()
    }

    func accountRecord(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityAccountRecord {
        _ = try await authorize(request.operatorCall, scope: .accountsRead)
        guard let record = try await stored({ () async throws(IdentityStorageError) in
            try await storage.accountRecord(accountId: request.accountId, userIdType: configuration.userIdType)
        }) else {
            throw ServiceError(AccountError(code: .notFound))
        }
        return record
    }
}

/// A search page's cursor: its last account's place, as `<milliseconds>.<accountId>` in unpadded base64url. Opaque to
/// callers; anything else is refused.
enum AccountSearchCursor {
    static func encode(_ position: AccountSearchPosition) -> String {
        Data("\(position.createdAt.milliseconds).\(position.accountId)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ cursor: String) -> AccountSearchPosition? {
        guard (1...200).contains(cursor.utf8.count) else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
              let dot = text.firstIndex(of: "."), let milliseconds = Int64(text[..<dot]),
              // Checked before it becomes a date: one beyond the years Konto keeps made PostgresNIO's encoding trap.
              let createdAt = Timestamp(checkingMilliseconds: milliseconds)
        else { return nil }
        let accountId = String(text[text.index(after: dot)...])
        guard !accountId.isEmpty, !accountId.unicodeScalars.contains("\u{0}") else { return nil }
        return AccountSearchPosition(createdAt: createdAt, accountId: accountId)
    }
}

/// Operator keys made outside the admin API: `konto admin keys create`, run against Identity's database by someone who
/// holds its URL (the deployment's first key, or a way back in when every key is lost).
public enum OperatorKeyMaker {
    /// Makes and stores a key; answers its record and its text (shown once).
    public static func create(
        name: String, scopes: [OperatorScope], expiresAt: Timestamp?, in storage: any OperatorStorage, at now: Timestamp = .now
    ) async throws(ServiceError) -> IdentityOperatorKeyCreated {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...IdentityCreateOperatorKeyRequest.maximumNameLength).contains(trimmed.count) else {
            throw Operators.invalid("A key's name has 1 to \(IdentityCreateOperatorKeyRequest.maximumNameLength) characters.")
        }
        guard !scopes.isEmpty else { throw Operators.invalid("A key needs at least one scope.") }
        return try await Operators.create(name: trimmed, scopes: Array(Set(scopes)).sorted(), expiresAt: expiresAt, createdBy: nil, at: now, in: storage)
    }
}
