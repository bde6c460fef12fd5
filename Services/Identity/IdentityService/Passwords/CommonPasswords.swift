import Foundation

/// Passwords too common to accept (OWASP ASVS 5.0 6.2.4: at least the 3,000 most common): the built-in list
/// (`Passwords/common-passwords.txt`, Openwall's password.lst from Debian's john-data, embedded by SwiftPM), and, with ``init(adding:)``, an operator's bigger one. Compared
/// case-insensitively, so `Password1` is as common as `password1`.
public struct CommonPasswords: Sendable, Equatable {
    private let passwords: Set<String>

    /// The built-in list.
    public static let builtIn = CommonPasswords(lines: builtInList)

    /// The built-in list's text, as the file has it.
    static let builtInList = String(decoding: PackageResources.common_passwords_txt, as: UTF8.self)

    /// The built-in list and the passwords of `file`'s text (one per line; lines starting with `#!comment` skipped).
    public init(adding text: String) {
        self.passwords = Self.builtIn.passwords.union(Self.entries(text))
    }

    private init(lines text: String) {
        self.passwords = Self.entries(text)
    }

    public var count: Int { passwords.count }

    public func contains(_ password: String) -> Bool {
        passwords.contains(password.lowercased())
    }

    private static func entries(_ text: String) -> Set<String> {
        var entries = Set<String>()
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#!comment") && !line.isEmpty {
            entries.insert(line.lowercased())
        }
        return entries
    }
}
