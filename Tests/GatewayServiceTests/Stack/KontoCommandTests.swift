import Foundation
import KontoTesting
import KontoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `konto` account commands as a user runs them: the real binary against `konto stack` in another process,
/// passwords on standard input (not a terminal), one session file per user; exit statuses and output checked.
@Suite("konto account commands", .timeLimit(.minutes(3)))
struct KontoCommandTests {
    static let password = "correct horse battery"

    @Test("sign-up, whoami, set and remove details, show, schema and logout, as text and JSON; the session file is the user's alone")
    func journey() async throws {
        try await withStack { stack in
            let signUp = try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n")
            #expect(signUp.status == 0, "\(signUp.standardError)")
            #expect(signUp.standardOutput.hasPrefix("Signed up as ada@example.org (account "))
            #expect(signUp.standardError.isEmpty)

            let permissions = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int }
            #expect(try permissions(stack.sessionFile()) == 0o600)
            #expect(try permissions((stack.sessionFile() as NSString).deletingLastPathComponent) == 0o700)
            let file = try String(contentsOfFile: stack.sessionFile(), encoding: .utf8)
            #expect(!file.contains(Self.password))

            let whoami = try await stack.konto("whoami")
            #expect(whoami.status == 0)
            #expect(whoami.standardOutput.hasPrefix("ada@example.org (account "))

            let set = try await stack.konto("account", "set", "dateOfBirth=1815-12-10", "name.middleName=King", "genderIdentity=female")
            #expect(set.status == 0, "\(set.standardError)")
            #expect(set.standardOutput.contains("dateOfBirth     1815-12-10"), "\(set.standardOutput)")
            // A part of the name changes alone: the others are kept.
            #expect(set.standardOutput.contains("name            Ada King Lovelace"), "\(set.standardOutput)")
            #expect(set.standardOutput.contains("genderIdentity  female"), "\(set.standardOutput)")

            let removed = try await stack.konto("account", "remove", "genderIdentity", "--json")
            #expect(removed.status == 0, "\(removed.standardError)")
            let document = try JSONSerialization.jsonObject(with: Data(removed.standardOutput.utf8)) as? [String: Any]
            let details = document?["details"] as? [String: Any]
            #expect(details?["genderIdentity"] == nil)
            #expect(details?["dateOfBirth"] as? String == "1815-12-10")
            #expect(document?["version"] as? Int == 3)

            let show = try await stack.konto("account", "show")
            #expect(show.status == 0)
            #expect(show.standardOutput.contains("version 3"))
            #expect(!show.standardOutput.contains("genderIdentity"))

            let schema = try await stack.konto("schema")
            #expect(schema.status == 0)
            #expect(schema.standardOutput.contains("dateOfBirth"))
            #expect(schema.standardOutput.contains("genderIdentity  collects  enum        Gender Identity (female, male"), "\(schema.standardOutput)")
            // Aligned: every key's requirement, type and name start in the same column.
            let rows = schema.standardOutput.split(separator: "\n").dropFirst().map(String.init)
            for column in ["collects", "requires"] {
                let starts = Set(rows.compactMap { row in row.range(of: "  \(column)  ").map { $0.lowerBound.utf16Offset(in: row) } })
                #expect(starts.count <= 1, "\(schema.standardOutput)")
            }
            let nameStarts = Set(rows.map { row in (row.range(of: #"\S+\s+\S+\s+\S+\s+"#, options: .regularExpression)?.upperBound).map { $0.utf16Offset(in: row) } ?? -1 })
            #expect(nameStarts.count == 1, "\(schema.standardOutput)")
            let schemaJSON = try await stack.konto("schema", "--json")
            #expect((try JSONSerialization.jsonObject(with: Data(schemaJSON.standardOutput.utf8)) as? [String: Any])?["keys"] is [Any])

            let logout = try await stack.konto("logout")
            #expect(logout.status == 0)
            #expect(logout.standardOutput == "Logged out.\n")
            let after = try await stack.konto("whoami")
            #expect(after.status == 2)
            #expect(after.standardError == "konto: not signed in: `konto login USERID` or `konto signup USERID` first\n")

            let login = try await stack.konto("login", "ada@example.org", "--json", input: Self.password + "\n")
            #expect(login.status == 0, "\(login.standardError)")
            let signedIn = try JSONSerialization.jsonObject(with: Data(login.standardOutput.utf8)) as? [String: Any]
            #expect(signedIn?["userId"] as? String == "ada@example.org")
            #expect((signedIn?["accountId"] as? String)?.isEmpty == false)
        }
    }

    @Test("a wrong password and an unknown userId get the same one line and exit 1; nothing is stored")
    func wrongPassword() async throws {
        try await withStack { stack in
            _ = try await stack.konto("signup", "grace@example.org", "name=Grace Hopper", input: Self.password + "\n", user: "other")
            let wrong = try await stack.konto("login", "grace@example.org", input: "not the password\n")
            let unknown = try await stack.konto("login", "nobody@example.org", input: "not the password\n")
            for run in [wrong, unknown] {
                #expect(run.status == 1)
                #expect(run.standardError == "konto: wrong userId or password\n")
                #expect(run.standardOutput.isEmpty)
            }
            #expect(!FileManager.default.fileExists(atPath: stack.sessionFile()))
            let json = try await stack.konto("login", "grace@example.org", "--json", input: "not the password\n")
            let problem = (try JSONSerialization.jsonObject(with: Data(json.standardError.utf8)) as? [String: Any])?["error"] as? [String: Any]
            #expect(problem?["code"] as? String == "account.wrongCredentials")
            #expect(problem?["status"] as? Int == 401)
        }
    }

    @Test("with the gateway down: one line naming the URL and `konto stack`, exit 3; JSON for scripts")
    func gatewayDown() async throws {
        let executable = try ServiceProcess.executable(named: "konto")
        let url = "http://127.0.0.1:\(try FreePort.loopback())"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["KONTO_SESSION_FILE": directory + "/sessions.json"]
        let started = ContinuousClock.now
        let login = try await ServiceProcess.run(executable, arguments: ["login", "ada@example.org", "--gateway", url], environment: environment, input: Self.password + "\n")
        // At once: a refused connection is not retried until a deadline.
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(login.status == 3)
        #expect(login.standardError == "konto: the gateway is not reachable at \(url): is `konto stack` running?\n")
        #expect(login.standardOutput.isEmpty)

        let json = try await ServiceProcess.run(executable, arguments: ["schema", "--json"], environment: environment.merging(["KONTO_GATEWAY": url]) { $1 })
        #expect(json.status == 3)
        let problem = (try JSONSerialization.jsonObject(with: Data(json.standardError.utf8)) as? [String: Any])?["error"] as? [String: Any]
        #expect(problem?["code"] as? String == "client.unreachable")

        let bad = try await ServiceProcess.run(executable, arguments: ["schema", "--gateway", "ftp://example.org"], environment: environment)
        #expect(bad.status == 64)
        #expect(bad.standardError.contains("--gateway must be an http(s) URL"))
    }

    @Test("refusals and unusable input: field errors on one line (exit 1), unknown keys and a missing password before anything is sent (exit 64)")
    func refusals() async throws {
        try await withStack { stack in
            let empty = try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: "")
            #expect(empty.status == 64)
            #expect(empty.standardError == "konto: expected a password on standard input, found its end\n")

            let weak = try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: "short\n")
            #expect(weak.status == 1)
            #expect(weak.standardError.contains("(account.validationFailed): password: "), "\(weak.standardError)")

            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            let taken = try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n", user: "other")
            #expect(taken.status == 1)
            #expect(taken.standardError.contains("account.credentialsTaken"), "\(taken.standardError)")

            let invalid = try await stack.konto("account", "set", "dateOfBirth=yesterday")
            #expect(invalid.status == 1)
            #expect(invalid.standardError.contains("dateOfBirth: "), "\(invalid.standardError)")
            #expect(invalid.standardError.split(separator: "\n").count == 1)

            for (arguments, message) in [
                (["account", "set", "favouriteColour=blue"], "unknown key 'favouriteColour'"),
                (["account", "set", "dateOfBirth"], "'dateOfBirth' is not KEY=VALUE"),
                (["account", "set", "password=x"], "'password' is not changed with `account set`"),
                (["account", "remove", "userId"], "'userId' cannot be removed"),
            ] {
                let run = try await stack.konto(arguments)
                #expect(run.status == 64, "\(arguments)")
                #expect(run.standardError.contains(message), "\(run.standardError)")
            }
            // A link's token may begin with "-" (URL-safe base64): it is the option's value, sent and refused as a
            // token, not taken for an option.
            let dashed = try await stack.konto("verify-email", "--token", "-" + String(repeating: "A", count: 42))
            #expect(dashed.status == 1 && dashed.standardError.contains("invalid, used or expired"), "\(dashed.standardError)")
            let stale = try await stack.konto("account", "set", "dateOfBirth=1815-12-10", "--if-version", "0")
            #expect(stale.status == 1)
            #expect(stale.standardError.contains("account.versionConflict"), "\(stale.standardError)")
        }
    }

    @Test("password: the current one is required; other sessions end; the old password no longer logs in")
    func password() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            #expect(try await stack.konto("login", "ada@example.org", input: Self.password + "\n", user: "laptop").status == 0)

            let wrong = try await stack.konto("password", input: "not it\nnew horse battery staple\n")
            #expect(wrong.status == 1)
            #expect(wrong.standardError == "konto: wrong password\n")

            let changed = try await stack.konto("password", input: Self.password + "\nnew horse battery staple\n")
            #expect(changed.status == 0, "\(changed.standardError)")
            #expect(changed.standardOutput == "Password changed; 1 other session ended.\n")

            // The laptop's session ended: it is told so once, and forgets the session.
            let ended = try await stack.konto("whoami", user: "laptop")
            #expect(ended.status == 2)
            #expect(ended.standardError == "konto: the session has ended: `konto login USERID` again\n")
            #expect(try await stack.konto("whoami", user: "laptop").standardError.contains("not signed in"))

            #expect(try await stack.konto("login", "ada@example.org", input: Self.password + "\n", user: "laptop").status == 1)
            #expect(try await stack.konto("login", "ada@example.org", input: "new horse battery staple\n", user: "laptop").status == 0)
        }
    }

    @Test("user-id and logout --everywhere; delete needs --yes off a terminal and the password, then the account is gone")
    func userIdAndDelete() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            let renamed = try await stack.konto("user-id", "countess@example.org", input: Self.password + "\n")
            #expect(renamed.status == 0, "\(renamed.standardError)")
            #expect(try await stack.konto("whoami").standardOutput.hasPrefix("countess@example.org "))
            #expect(try await stack.konto("login", "ada@example.org", input: Self.password + "\n", user: "other").status == 1)
            #expect(try await stack.konto("login", "countess@example.org", input: Self.password + "\n", user: "other").status == 0)

            let everywhere = try await stack.konto("logout", "--everywhere")
            #expect(everywhere.standardOutput == "Logged out of 2 sessions.\n", "\(everywhere.standardError)")
            #expect(try await stack.konto("whoami", user: "other").status == 2)

            #expect(try await stack.konto("login", "countess@example.org", input: Self.password + "\n").status == 0)
            let unconfirmed = try await stack.konto("delete", input: Self.password + "\n")
            #expect(unconfirmed.status == 64)
            #expect(unconfirmed.standardError == "konto: deleting needs --yes when not at a terminal\n")
            let wrong = try await stack.konto("delete", "--yes", input: "not it\n")
            #expect(wrong.status == 1)
            #expect(wrong.standardError == "konto: wrong password\n")
            #expect(try await stack.konto("whoami").status == 0)

            let deleted = try await stack.konto("delete", "--yes", input: Self.password + "\n")
            #expect(deleted.status == 0, "\(deleted.standardError)")
            #expect(deleted.standardOutput.hasPrefix("Account ") && deleted.standardOutput.hasSuffix(" deleted.\n"))
            #expect(try await stack.konto("whoami").status == 2)
            #expect(try await stack.konto("login", "countess@example.org", input: Self.password + "\n").status == 1)
        }
    }

    @Test("applications: none with access, as text and JSON; revoking one without access is refused (exit 1)")
    func applications() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            let text = try await stack.konto("applications")
            #expect(text.status == 0 && text.standardOutput == "No application has access.\n", "\(text.standardError)")
            let json = try await stack.konto("applications", "--json")
            #expect(json.status == 0 && json.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(json.standardOutput)")
            let refused = try await stack.konto("applications", "revoke", "study-app")
            #expect(refused.status == 1 && refused.standardError.contains("No such application has access"), "\(refused.standardError)")
        }
    }

    @Test("sessions: where the account is signed in, as text and JSON, this one marked; every other ended with the password; this one ended as a logout")
    func sessions() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            #expect(try await stack.konto("login", "ada@example.org", input: Self.password + "\n", user: "laptop").status == 0)
            let text = try await stack.konto("sessions")
            #expect(text.status == 0, "\(text.standardError)")
            let lines = text.standardOutput.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines[0].contains(" (this one)  signUp  last used ") && lines[0].contains("konto command line on "), "\(text.standardOutput)")
            #expect(lines[1].contains("  password  ") && !lines[1].contains("(this one)"))
            let json = try await stack.konto("sessions", "--json")
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
            #expect(listed.map { $0["current"] as? Bool } == [true, false])
            #expect(listed.allSatisfy { ($0["clientAddress"] as? String) == "127.0.0.0/24" })
            let mine = try #require(listed[0]["id"] as? String)

            let others = try await stack.konto("sessions", "end-others", "--current-password", input: Self.password + "\n")
            #expect(others.standardOutput == "Ended 1 other session.\n", "\(others.standardError)")
            #expect(try await stack.konto("whoami", user: "laptop").status == 2)
            let unknown = try await stack.konto("sessions", "end", "00000000-0000-4000-8000-000000000000", "--current-password", input: Self.password + "\n")
            #expect(unknown.status == 1 && unknown.standardError.contains("no such session"), "\(unknown.standardError)")

            // The notice of sign-ins from new clients: on, then off with the password.
            #expect(try await stack.konto("mail").standardOutput == "Sign-ins from new clients: mailed\n")
            let off = try await stack.konto("mail", "--new-sign-in", "off", "--current-password", input: Self.password + "\n")
            #expect(off.standardOutput == "Sign-ins from new clients: not mailed\n", "\(off.standardError)")
            #expect(try await stack.konto("mail", "--json").standardOutput.contains(#""newSignIn":false"#))

            // A copy of the account's data: to standard output, or to a file only its owner reads.
            let printed = try await stack.konto("export", "--current-password", input: Self.password + "\n")
            #expect(printed.status == 0, "\(printed.standardError)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(printed.standardOutput.utf8)) as? [String: Any])
            #expect((document["credential"] as? [String: Any])?["userId"] as? String == "ada@example.org")
            #expect((document["mailPreferences"] as? [String: Any])?["newSignIn"] as? Bool == false)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("konto-export-\(UUID().uuidString).json").path
            defer { try? FileManager.default.removeItem(atPath: file) }
            let saved = try await stack.konto("export", "--output", file)
            #expect(saved.status == 0 && saved.standardOutput.hasPrefix("Saved your data to \(file) ("), "\(saved.standardError)")
            #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) is [String: Any])

            // The reauthentication before the export replaced this session with a fresh one.
            let relisted = try #require(try JSONSerialization.jsonObject(with: Data(try await stack.konto("sessions", "--json").standardOutput.utf8)) as? [[String: Any]])
            let current = try #require(relisted.first { $0["current"] as? Bool == true }?["id"] as? String)
            #expect(current != mine)
            let own = try await stack.konto("sessions", "end", current)
            #expect(own.standardOutput == "Ended session \(current).\n", "\(own.standardError)")
            #expect(try await stack.konto("whoami").status == 2)
        }
    }

    @Test("events follows the stream from when it opened: a change's event arrives as a JSON line, the sign-up's before it does not; a stopping gateway ends it")
    func events() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            let follower = try ServiceProcess.start(
                stack.executable,
                arguments: ["events", "--json"],
                environment: ["KONTO_GATEWAY": stack.gatewayURL, "KONTO_SESSION_FILE": stack.sessionFile()]
            )
            // Changed once the follower says it follows: from then on nothing is missed.
            let opened = ContinuousClock.now + .seconds(20)
            while !follower.output.contains("Following the account's events"), follower.isRunning, ContinuousClock.now < opened {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await stack.konto("account", "set", "dateOfBirth=1815-12-10").status == 0)
            let deadline = ContinuousClock.now + .seconds(20)
            while !follower.output.contains("detailsChanged"), follower.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // Still following: it ends only when told to.
            #expect(follower.isRunning)
            let lines = follower.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(lines.map { $0["type"] as? String } == ["detailsChanged"], "\(follower.output)")
            #expect((lines.last?["data"] as? [String: Any])?["keys"] as? [String] == ["dateOfBirth"])

            // The stack stops with the stream open (it does not wait for the follower to leave), and the follower
            // is told why, to resume elsewhere.
            stack.process.signal(SIGTERM)
            #expect(await stack.process.waitForExit(timeout: .seconds(20)) == 0, "\(stack.process.output)")
            #expect(await follower.waitForExit(timeout: .seconds(10)) == 3)
            #expect(follower.output.contains("\"code\":\"wire.shuttingDown\""), "\(follower.output)")
            try? FileManager.default.removeItem(atPath: follower.logPath)
        }
    }

    @Test("at a terminal, passwords are asked for without echo (a new one twice) and nothing typed is shown")
    func terminal() async throws {
        try await withStack { stack in
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/pty-run.py").path
            let answers = #"[["Password for ada@example.org: ", "correct horse battery"], ["Again: ", "correct horse battery"]]"#
            let run = try await ServiceProcess.run(
                "/usr/bin/env",
                arguments: ["python3", script, answers, stack.executable, "signup", "ada@example.org", "name=Ada Lovelace"],
                environment: ["KONTO_GATEWAY": stack.gatewayURL, "KONTO_SESSION_FILE": stack.sessionFile()]
            )
            let result = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
            let transcript = result?["transcript"] as? String ?? ""
            #expect(result?["status"] as? Int == 0, "\(run.standardError) \(transcript)")
            #expect(transcript.contains("Password for ada@example.org: "))
            #expect(transcript.contains("Again: "))
            #expect(transcript.contains("Signed up as ada@example.org"))
            #expect(!transcript.contains("correct horse"), "the password was echoed: \(transcript)")

            // Two different entries are refused before anything is sent.
            let mismatch = try await ServiceProcess.run(
                "/usr/bin/env",
                arguments: ["python3", script, #"[["Password for grace@example.org: ", "one password"], ["Again: ", "another one"]]"#, stack.executable, "signup", "grace@example.org", "name=Grace Hopper"],
                environment: ["KONTO_GATEWAY": stack.gatewayURL, "KONTO_SESSION_FILE": stack.sessionFile("grace")]
            )
            let refused = try JSONSerialization.jsonObject(with: Data(mismatch.standardOutput.utf8)) as? [String: Any]
            #expect(refused?["status"] as? Int == 64)
            #expect((refused?["transcript"] as? String)?.contains("konto: the passwords do not match") == true)
        }
    }

    @Test("health: ready over HTTP and over the wire (exit 0); not reachable (3); a wrong or missing secret is refused")
    func health() async throws {
        try await withStack { stack in
            let http = try await ServiceProcess.run(stack.executable, arguments: ["health", "--http", stack.gatewayURL])
            #expect(http.status == 0, "\(http.standardError)")
            #expect(http.standardOutput.contains("200"))
            let wire = try await ServiceProcess.run(
                stack.executable, arguments: ["health", "--wire", "127.0.0.1:\(stack.identityPort)", "--service", "identity"], environment: ["KONTO_WIRE_SECRET": KontoStackProcess.secret]
            )
            #expect(wire.status == 0, "\(wire.standardError)")
            #expect(wire.standardOutput.hasPrefix("identity ready"), "\(wire.standardOutput)")

            let wrongSecret = try await ServiceProcess.run(
                stack.executable, arguments: ["health", "--wire", "127.0.0.1:\(stack.identityPort)", "--service", "identity", "--timeout", "2"], environment: ["KONTO_WIRE_SECRET": "another secret of sixteen bytes or more"]
            )
            #expect(wrongSecret.status == 3, "\(wrongSecret.standardOutput)")
            let noSecret = try await ServiceProcess.run(
                stack.executable, arguments: ["health", "--wire", "127.0.0.1:\(stack.identityPort)", "--service", "identity"], environment: ["KONTO_WIRE_SECRET": ""]
            )
            #expect(noSecret.status == 64)
            #expect(noSecret.standardError.contains("KONTO_IDENTITY_WIRE_VERIFIERS (or KONTO_WIRE_SECRET in development) must be set"), "\(noSecret.standardError)")
            // The first verifier a server's own container holds proves the check to that server.
            let verifier = "gateway:" + WireSecret.hex(WireSecret(KontoStackProcess.secret).verifierBytes(caller: "gateway", server: "identity"))
            let own = try await ServiceProcess.run(
                stack.executable, arguments: ["health", "--wire", "127.0.0.1:\(stack.identityPort)", "--service", "identity"], environment: ["KONTO_IDENTITY_WIRE_VERIFIERS": verifier]
            )
            #expect(own.status == 0, "\(own.standardError)")
            // --wire needs the service's name.
            let nameless = try await ServiceProcess.run(stack.executable, arguments: ["health", "--wire", "127.0.0.1:\(stack.identityPort)"], environment: ["KONTO_WIRE_SECRET": KontoStackProcess.secret])
            #expect(nameless.status == 64 && nameless.standardError.contains("--wire needs --service"), "\(nameless.standardError)")
        }
        let down = "127.0.0.1:\(try FreePort.loopback())"
        let executable = try ServiceProcess.executable(named: "konto")
        let http = try await ServiceProcess.run(executable, arguments: ["health", "--http", "http://\(down)"])
        #expect(http.status == 3)
        let wire = try await ServiceProcess.run(executable, arguments: ["health", "--wire", down, "--service", "identity", "--timeout", "2"], environment: ["KONTO_WIRE_SECRET": KontoStackProcess.secret])
        #expect(wire.status == 3)
        let quiet = try await ServiceProcess.run(executable, arguments: ["health", "--quiet", "--http", "http://\(down)"])
        #expect(quiet.status == 3 && quiet.standardError.isEmpty && quiet.standardOutput.isEmpty)
        #expect(try await ServiceProcess.run(executable, arguments: ["health", "--wire", "nonsense"]).status == 64)
    }

    @Test("a session file others can read is refused, not used")
    func sessionFilePermissions() async throws {
        try await withStack { stack in
            #expect(try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n").status == 0)
            chmod(stack.sessionFile(), 0o644)
            let refused = try await stack.konto("whoami")
            #expect(refused.status == 64)
            #expect(refused.standardError.contains("is readable by others (mode 644)"), "\(refused.standardError)")
        }
    }

    private func withStack(_ body: (KontoStackProcess) async throws -> Void) async throws {
        try await KontoStackProcess.with(body)
    }
}
