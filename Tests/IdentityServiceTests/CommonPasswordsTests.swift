import Foundation
@testable import IdentityService
import Testing

@Suite("Common passwords")
struct CommonPasswordsTests {
    @Test("the built-in list is the embedded file: 3,545 passwords, 3,410 without regard to case (ASVS asks for 3,000)")
    func embeddedList() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("Services/Identity/IdentityService/Passwords/common-passwords.txt"), encoding: .utf8)
        #expect(CommonPasswords.builtInList == file)
        #expect(file.split(separator: "\n").filter { !$0.hasPrefix("#!comment") }.count == 3_545)
        #expect(CommonPasswords.builtIn.count == 3_410)
        #expect(CommonPasswords.builtIn.contains("password") && CommonPasswords.builtIn.contains("123456"))
    }

    @Test("comments and blank lines are no passwords; entries compare without case")
    func entries() {
        let list = CommonPasswords(adding: "#!comment: a header\n\nHunter2\n")
        #expect(list.contains("hunter2") && list.contains("HUNTER2"))
        #expect(!list.contains("#!comment: a header") && !list.contains(""))
        #expect(list.count == CommonPasswords.builtIn.count + 1)
    }
}
