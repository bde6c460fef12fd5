import NIOCore

/// Runs tasks on a NIO event loop, so work that mostly waits on I/O (a connection's request
/// handlers, see ``WireServer/HandlerExecution``; a batch of database reads) skips the hops between
/// the event loop thread and Swift's global executor.
public final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    public let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
