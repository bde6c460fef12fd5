import Foundation
import HTTPTypes
import KontoContracts
import KontoErrors
import KontoModel
import OpenAPIRuntime

/// Making and changing accounts for an operator (docs/ADMIN.md, "Creating and importing accounts", "Changing an
/// account"): one JSON body, or many as NDJSON, each line made by the same Identity call and reported on its own.
extension GatewayAPI {
    /// Most lines an import takes (a larger set goes in several requests).
    static let maximumImportLines = 10_000
    /// Longest line of an import: what any other JSON body may be.
    static let maximumImportLineBytes = 64 * 1024
    /// Lines made at once: enough to overlap the calls' round trips, few enough to leave Identity room for sign-ins.
    static let importConcurrency = 4

    func adminCreateAccount(_ input: Operations.AdminCreateAccount.Input) async throws -> Operations.AdminCreateAccount.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let created = try await createAccount(body, call: Self.operatorCall())
        return .created(.init(body: .json(adminAccount(created.record, profile: created.profile))))
    }

    func adminImportAccounts(_ input: Operations.AdminImportAccounts.Input) async throws -> Operations.AdminImportAccounts.Output {
        guard case .applicationXNdjson(let body) = input.body else { throw GatewayProblem.malformed("The body must be NDJSON (application/x-ndjson).") }
        let call = try Self.operatorCall()
        // The key once for the whole import: a refused one is the request's 401 (or 403), counted once against the
        // address, not once per line (an import with a mistyped key would throttle its operator out).
        _ = try await upstreams.identity(IdentityContract.operatorAuthorize, IdentityOperatorAuthorizeRequest(operatorCall: call, scope: .accountsWrite, action: "accounts.import"))
        // The body middleware has read it within the import's limit already.
        let bytes = try await Data(collecting: body, upTo: .max)
        let lines = Self.importLines(bytes)
        guard lines.count <= Self.maximumImportLines else {
            throw GatewayProblem(
                status: .contentTooLarge, code: .requestBodyTooLarge,
                detail: "An import has at most \(Self.maximumImportLines) lines; send the rest in another request."
            )
        }
        guard !lines.isEmpty else { throw GatewayProblem.malformed("The body has no line to import.") }
        let report = await withTaskGroup(of: Components.Schemas.AccountImportLine.self) { group in
            var reported: [Components.Schemas.AccountImportLine] = []
            var next = lines.makeIterator()
            func addNext() -> Bool {
                guard let (number, line) = next.next() else { return false }
                group.addTask { await importLine(number: number, line, call: call) }
                return true
            }
            for _ in 0..<Self.importConcurrency where !addNext() { break }
            while let outcome = await group.next() {
                reported.append(outcome)
                _ = addNext()
            }
            return reported.sorted { $0.line < $1.line }
        }
        let created = report.count { $0.accountId != nil }
        return .ok(.init(body: .json(.init(created: created, failed: report.count - created, lines: report))))
    }

    /// The body's non-empty lines with their numbers (from 1), a trailing `\r` dropped.
    static func importLines(_ bytes: Data) -> [(Int, Data)] {
        var lines: [(Int, Data)] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var line = line
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard line.contains(where: { ![UInt8(ascii: " "), UInt8(ascii: "\t")].contains($0) }) else { continue }
            lines.append((index + 1, Data(line)))
        }
        return lines
    }

    /// One line made, or its refusal as the single call's problem would say it.
    func importLine(number: Int, _ line: Data, call: IdentityOperatorCall) async -> Components.Schemas.AccountImportLine {
        do throws(GatewayProblem) {
            guard line.count <= Self.maximumImportLineBytes else {
                throw GatewayProblem.malformed("A line has at most \(Self.maximumImportLineBytes) bytes.")
            }
            let creation: Components.Schemas.AdminAccountCreation
            do {
                creation = try JSONDecoder().decode(Components.Schemas.AdminAccountCreation.self, from: line)
            } catch {
                throw GatewayProblem.malformed("The line is not an account as POST /admin/v1/accounts takes it (a JSON object with a userId).")
            }
            let created = try await createAccount(creation, call: call)
            return .init(line: number, accountId: created.record.facts.accountId)
        } catch {
            return .init(line: number, problem: .init(
                code: error.code.rawValue, detail: error.detail,
                errors: error.fields.isEmpty ? nil : error.fields.map { .init(key: $0.key, code: $0.code.rawValue, message: $0.message) }
            ))
        }
    }

    func adminUpdateAccount(_ input: Operations.AdminUpdateAccount.Input) async throws -> Operations.AdminUpdateAccount.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let expectedVersion = try Self.expectedVersion(ifMatch: input.headers.ifMatch)
        let modifications = body.set == nil && body.remove == nil ? nil : AccountModifications(set: body.set ?? AccountDetails(), remove: Set(body.remove ?? []))
        defer { cache.invalidate(accountId: input.path.accountId) }
        let changed = try await upstreams.identity(IdentityContract.updateAccount, IdentityUpdateAccountRequest(
            operatorCall: Self.operatorCall(), accountId: input.path.accountId, userId: body.userId, verified: body.verified, modifications: modifications,
            expectedVersion: expectedVersion
        ))
        // A new userId ended the account's sessions: answered once every gateway's cache has dropped them.
        await awaitCaches(changed.eventIds)
        return .ok(.init(body: .json(adminAccount(changed.record, profile: changed.profile))))
    }

    func createAccount(_ body: Components.Schemas.AdminAccountCreation, call: IdentityOperatorCall) async throws(GatewayProblem) -> IdentityManagedAccount {
        try await upstreams.identity(IdentityContract.createAccount, IdentityCreateAccountRequest(
            operatorCall: call, userId: body.userId, password: body.password.map(SecretString.init), passwordHash: body.passwordHash.map(SecretString.init),
            details: body.details ?? AccountDetails(), verified: body.verified ?? false
        ))
    }
}
