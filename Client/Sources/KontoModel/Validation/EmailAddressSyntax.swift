/// What Konto takes as an email address it can send mail to: one ASCII `local@domain` (RFC 5321's dot-atom with the
/// characters RFC 5322 allows), no whitespace, control characters, angle brackets or commas, at most 254 characters,
/// a local part of at most 64 and a domain of labels. Sign-up and a change of userId check it (an account whose
/// address no mail can reach gets no verification or reset), and the courier checks every recipient against it
/// before a header or an SMTP command is written.
public enum EmailAddressSyntax {
    static let localCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~.")
    static let domainCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")

    /// The rule's name in field errors (`rule.deliverableEmail`).
    public static let ruleName = "deliverableEmail"
    public static let message = "Enter one email address that can receive mail, such as name@example.org."

    public static func isDeliverable(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.utf8.count <= 254, parts.count == 2, let local = parts.first, let domain = parts.last,
              (1...64).contains(local.count), !domain.isEmpty,
              local.allSatisfy(localCharacters.contains), domain.allSatisfy(domainCharacters.contains),
              !local.hasPrefix("."), !local.hasSuffix("."), !local.contains(".."),
              !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.hasPrefix("-"), !domain.contains("..")
        else { return false }
        return domain.split(separator: ".").allSatisfy { (1...63).contains($0.count) && !$0.hasSuffix("-") }
    }
}
