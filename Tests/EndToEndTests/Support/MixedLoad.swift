import Foundation
import KontoClient
import KontoModel
import Synchronization

/// A steady load of mixed calls through the gateway — sign-ups, logins, reads, changes and deletions — from a few
/// concurrent users, each call's outcome tallied under the phase it started in.
final class MixedLoad: Sendable {
    /// How one call ended.
    enum Outcome: Sendable, Equatable {
        case succeeded
        /// 503 from the gateway (with its problem document's code, and which call got it).
        case unavailable(String)
        /// No answer: the connection was refused or lost (only expected while the gateway itself is down).
        case unreachable(String)
        /// Anything else: a 500, an unexpected refusal, a call that outlived its deadline.
        case failed(String)
    }

    struct Tally: Sendable {
        var sent = 0
        var succeeded = 0
        var unavailable = 0
        var unreachable = 0
        /// Which calls found no one to answer, and how.
        var unreachableCalls: [String] = []
        /// The 503s by call and code.
        var unavailableCodes: [String: Int] = [:]
        var failures: [String] = []
        var slowest: Duration = .zero

        mutating func add(_ outcome: Outcome, took: Duration) {
            sent += 1
            slowest = max(slowest, took)
            switch outcome {
            case .succeeded: succeeded += 1
            case .unavailable(let code):
                unavailable += 1
                unavailableCodes[code, default: 0] += 1
            case .unreachable(let what):
                unreachable += 1
                unreachableCalls.append(what)
            case .failed(let what): failures.append(what)
            }
        }

        static func + (left: Tally, right: Tally) -> Tally {
            Tally(
                sent: left.sent + right.sent,
                succeeded: left.succeeded + right.succeeded,
                unavailable: left.unavailable + right.unavailable,
                unreachable: left.unreachable + right.unreachable,
                unreachableCalls: left.unreachableCalls + right.unreachableCalls,
                unavailableCodes: left.unavailableCodes.merging(right.unavailableCodes, uniquingKeysWith: +),
                failures: left.failures + right.failures,
                slowest: max(left.slowest, right.slowest)
            )
        }
    }

    /// A signed-up user of the load, with its own client (session), and how many calls are using it right now.
    struct User: Sendable {
        var userId: String
        var client: KontoClient
        var inUse = 0
    }

    private struct State {
        var phase = "start"
        var tallies: [String: Tally] = [:]
        var users: [User] = []
        var nextUser = 0
        /// userIds whose sign-up the gateway confirmed, those whose deletion it confirmed, and those whose deletion
        /// was asked for without an answer that says whether it happened (a 503: the answer was lost with a service).
        var created: Set<String> = []
        var deleted: Set<String> = []
        var perhapsDeleted: Set<String> = []
        var stopped = false
    }

    static let password = "steady load password 1"
    private let state = Mutex(State())
    private let makeClient: @Sendable () -> KontoClient
    private let schema: KontoSchema

    init(schema: KontoSchema, makeClient: @escaping @Sendable () -> KontoClient) {
        self.schema = schema
        self.makeClient = makeClient
    }

    /// Starts a new phase: calls started from now on are tallied under `name` (and a call that started in a phase
    /// named "… before" but ended after it, under the phase it ended in).
    func begin(_ name: String) {
        state.withLock { $0.phase = name }
    }

    func tally(_ phase: String) -> Tally {
        state.withLock { $0.tallies[phase] ?? Tally() }
    }

    var total: Tally {
        state.withLock { $0.tallies.values.reduce(Tally(), +) }
    }

    var created: Set<String> { state.withLock { $0.created } }
    var deleted: Set<String> { state.withLock { $0.deleted } }
    var perhapsDeleted: Set<String> { state.withLock { $0.perhapsDeleted } }

    /// Runs `workers` users' calls until ``stop()``.
    func run(workers: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask { await self.work(seed: worker) }
            }
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Waits (bounded) until `count` calls that started in `phase` have ended.
    func waitForCalls(_ count: Int, in phase: String, within bound: Duration) async throws {
        let deadline = ContinuousClock.now + bound
        while tally(phase).sent < count {
            guard ContinuousClock.now < deadline else {
                throw EndToEndError("only \(tally(phase).sent) of \(count) calls ended in phase \(phase) within \(bound)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: The calls

    private func work(seed: Int) async {
        var generator = SystemRandomNumberGenerator()
        while !state.withLock({ $0.stopped }) {
            let roll = Int.random(in: 0..<100, using: &generator)
            let deleting = roll >= 95
            let (phase, user) = state.withLock { state in (state.phase, Self.take(&state.users, forDeletion: deleting)) }
            let start = ContinuousClock.now
            let outcome: Outcome
            switch (roll, user) {
            case (0..<25, _), (_, nil):
                outcome = await signUp()
            case (25..<40, let user?):
                outcome = await call("login") { _ = try await self.makeClient().logIn(userId: user.userId, password: Self.password) }
            case (40..<75, let user?):
                outcome = await call("read") { _ = try await user.client.account() }
            case (75..<95, let user?):
                outcome = await call("modify") {
                    _ = try await user.client.modify(set: try self.schema.details(fromAssignments: ["biography=Changed at \(start)."]))
                }
            case (_, let user?):
                outcome = await delete(user)
            }
            state.withLock { state in
                // A call still in flight when the fault struck belongs to the outage, not to the steady state before.
                let bucket = phase.hasSuffix(" before") && state.phase != phase ? state.phase : phase
                state.tallies[bucket, default: Tally()].add(outcome, took: ContinuousClock.now - start)
                if !deleting, let user, let index = state.users.firstIndex(where: { $0.userId == user.userId }) {
                    state.users[index].inUse -= 1
                }
            }
        }
    }

    /// A random user for a call (marked in use), or for deletion one no call is using (taken out of the pool, so
    /// no call uses a session that is about to end: that would be the test's race, not the system's).
    private static func take(_ users: inout [User], forDeletion: Bool) -> User? {
        if forDeletion {
            guard let index = users.indices.filter({ users[$0].inUse == 0 }).randomElement() else { return nil }
            return users.remove(at: index)
        }
        guard let index = users.indices.randomElement() else { return nil }
        users[index].inUse += 1
        return users[index]
    }

    private func signUp() async -> Outcome {
        let number = state.withLock { state in
            state.nextUser += 1
            return state.nextUser
        }
        let userId = "load\(number)@example.org"
        let client = makeClient()
        let outcome = await call("signup") {
            let details = try self.schema.details(fromAssignments: ["name=Load \(number)", "handle=load\(number)"])
            _ = try await client.signUp(userId: userId, password: Self.password, details: details)
        }
        if outcome == .succeeded {
            state.withLock { state in
                state.users.append(User(userId: userId, client: client))
                state.created.insert(userId)
            }
        }
        return outcome
    }

    private func delete(_ user: User) async -> Outcome {
        let outcome = await call("delete") { try await user.client.deleteAccount() }
        // Otherwise it may or may not have happened (the answer was lost with the service): the user is not used
        // again, and the final check finds its credentials and profile both present or both absent.
        state.withLock { state in
            if outcome == .succeeded {
                _ = state.deleted.insert(user.userId)
            } else {
                _ = state.perhapsDeleted.insert(user.userId)
            }
        }
        return outcome
    }

    private func call(_ name: String, _ body: () async throws -> Void) async -> Outcome {
        do {
            try await body()
            return .succeeded
        } catch let error as KontoClientError {
            switch (error.status, error.code) {
            case (503, let code):
                return .unavailable("\(name) \(code)")
            case (0, KontoClientError.Code.unreachable):
                return .unreachable("\(name) at \(Date().formatted(.iso8601.time(includingFractionalSeconds: true))): \(error.detail ?? "")")
            default:
                return .failed("\(name): \(error.status) \(error.code) \(error.detail ?? "")")
            }
        } catch {
            return .failed("\(name): \(error)")
        }
    }
}
