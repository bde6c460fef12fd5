import Foundation
import Synchronization

/// Holds pool threads until a test opens it (to fill the hashing pool).
final class ThreadGate: Sendable {
    private let condition = NSCondition()
    private let isOpen = Mutex(false)

    func wait() {
        condition.lock()
        while !isOpen.withLock({ $0 }) {
            condition.wait()
        }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }
}
