import NIOCore

/// Runs tasks on a NIO event loop, so a connection's request handlers can skip the hops between
/// the event loop thread and Swift's global executor (see ``WireServer/HandlerExecution``).
final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
