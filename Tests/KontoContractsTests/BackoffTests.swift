import KontoErrors
import Testing

@Suite("Back-off")
struct BackoffTests {
    @Test("none before a failure, the initial delay after one, doubling after more, never past the maximum")
    func exponential() {
        let backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect(backoff.delay(afterFailures: 0) == .zero)
        #expect((1...6).map { backoff.delay(afterFailures: $0) } == [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
        ])
        #expect(backoff.delay(afterFailures: Int.max) == .seconds(1))
        #expect(Backoff(initial: .seconds(2), maximum: .seconds(1)).maximum == .seconds(2))
    }

    @Test("equal jitter stays within [delay/2, delay], full within [0, delay]", arguments: 1...8)
    func jitter(failures: Int) {
        let plain = Backoff(initial: .milliseconds(10), maximum: .seconds(1)).delay(afterFailures: failures)
        for _ in 0..<200 {
            let equal = Backoff(initial: .milliseconds(10), maximum: .seconds(1), jitter: .equal).delay(afterFailures: failures)
            #expect(equal >= plain / 2 && equal <= plain)
            let full = Backoff(initial: .milliseconds(10), maximum: .seconds(1), jitter: .full).delay(afterFailures: failures)
            #expect(full >= .zero && full <= plain)
        }
    }

    @Test("attempts count failures in a row and start over after a success")
    func attempts() {
        var attempts = Backoff(initial: .milliseconds(5), maximum: .milliseconds(40)).attempts()
        #expect([attempts.failed(), attempts.failed(), attempts.failed()] == [.milliseconds(5), .milliseconds(10), .milliseconds(20)])
        attempts.succeeded()
        #expect(attempts.failures == 0)
        #expect(attempts.failed() == .milliseconds(5))
    }
}
