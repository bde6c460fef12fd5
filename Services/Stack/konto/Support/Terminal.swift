import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Secrets and confirmations from the person at the terminal, or from standard input when it is not one (scripts
/// pipe passwords in, one per line). Never from argv: other users can read a process's arguments.
enum Terminal {
    /// Longer lines are refused, not buffered: no password is this long.
    static let maximumLine = 4096

    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// A password: prompted for without echo at a terminal, else the next line of standard input.
    static func readSecret(prompt: String) throws -> String {
        guard isInteractive else { return try readLine(what: "a password") }
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            Output.note(prompt)
            return try readLine(what: "a password")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Ctrl-C while echo is off must not leave the terminal silent.
        savedTerminal = original
        signal(SIGINT) { _ in
            if var saved = savedTerminal { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            _exit(130)
        }
        // Echo off before the prompt, as getpass(3) does: what is typed after the prompt is never shown, and
        // TCSAFLUSH discards only what was typed before it.
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        Output.note(prompt)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            signal(SIGINT, SIG_DFL)
            savedTerminal = nil
            Output.note("\n")
        }
        return try readLine(what: "a password")
    }

    /// A new password: asked twice at a terminal (a typo would lock the account out); once from standard input.
    static func readNewSecret(prompt: String) throws -> String {
        let first = try readSecret(prompt: prompt)
        guard isInteractive else { return first }
        guard try readSecret(prompt: "Again: ") == first else {
            throw CommandFailure(usage: "the passwords do not match")
        }
        return first
    }

    /// A line typed at the terminal (with echo), for confirmations.
    static func ask(_ prompt: String) throws -> String {
        Output.note(prompt)
        return try readLine(what: "an answer")
    }

    /// The next line of standard input without its line ending; bounded before it is buffered.
    static func readLine(what: String) throws -> String {
        var bytes: [UInt8] = []
        while true {
            let character = getchar()
            if character == EOF {
                guard !bytes.isEmpty else { throw CommandFailure(usage: "expected \(what) on standard input, found its end") }
                break
            }
            if character == 0x0A { break }
            guard bytes.count < maximumLine else { throw CommandFailure(usage: "\(what) longer than \(maximumLine) bytes") }
            bytes.append(UInt8(character))
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard let line = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(usage: "\(what) that is not UTF-8")
        }
        return line
    }
}

/// The terminal's settings while echo is off, for the SIGINT handler (which cannot capture): set and cleared on
/// the one thread that reads the secret.
nonisolated(unsafe) private var savedTerminal: termios?
