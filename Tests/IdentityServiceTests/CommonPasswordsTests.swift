import Foundation
@testable import IdentityService
import Testing

@Suite("Common passwords")
struct CommonPasswordsTests {
    @Test("the embedded list is deploy/common-passwords.txt (else run scripts/embed-common-passwords.sh)")
    func embeddedCopy() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("deploy/common-passwords.txt"), encoding: .utf8)
        #expect(CommonPasswords.builtInList + "\n" == file, "run scripts/embed-common-passwords.sh")
    }

    @Test("comments and blank lines are no passwords; entries compare without case")
    func entries() {
        let list = CommonPasswords(adding: "#!comment: a header\n\nHunter2\n")
        #expect(list.contains("hunter2") && list.contains("HUNTER2"))
        #expect(!list.contains("#!comment: a header") && !list.contains(""))
        #expect(list.count == CommonPasswords.builtIn.count + 1)
    }
}
