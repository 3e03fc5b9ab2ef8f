import Dispatch
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// `AsyncLocationManager.stop()` waits for the session's end on a thread of the manager's own, never on its
/// caller's: the caller's thread runs other tasks meanwhile, and the caller resumes once the stop has ended.
@Suite("Async stop", .timeLimit(.minutes(1)))
struct AsyncStopTests {
    /// A task executor of one thread: whatever blocks that thread holds up every task that runs on it.
    final class OneThreadExecutor: TaskExecutor {
        private let queue = DispatchQueue(label: "one thread")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test func whileTheSessionsCloseIsHeldUpTheCallersThreadRunsOtherTasks() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        let (closing, closingBegan) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let released = Locked<Bool?>(nil)
        rig.source.onNextClosing {
            closingBegan.yield()
            // Bounded only so that a stop that blocked its caller's thread fails this test instead of hanging it:
            // the release below would then never run.
            released.withLock { $0 = release.wait(timeout: .now() + .seconds(120)) == .success }
        }
        let stopped = Locked(false)
        let gps = rig.gps
        await withTaskExecutorPreference(OneThreadExecutor()) {
            async let stopping: Void = { await gps.stop(); stopped.withLock { $0 = true } }()
            var began = closing.makeAsyncIterator()
            await began.next()
            // The close is held up, and this task runs on the executor's one thread, where stop() was called.
            #expect(!stopped.withLock { $0 }, "stop() returns only once the session has closed")
            release.signal()
            await stopping
        }
        #expect(released.withLock { $0 } == true, "the close was released by a task on the caller's thread")
        #expect(stopped.withLock { $0 })
        #expect(!rig.source.isRunning && rig.source.closeCount == 1)
        for try await _ in updates { Issue.record("no fix was sent") }
    }

    @Test func aStopRunsToItsEndWhenItsTaskIsCancelled() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        let gps = rig.gps
        let stopping = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await gps.stop()
        }
        await stopping.value
        #expect(!rig.source.isRunning, "the session closed before stop() returned")
        for try await _ in updates { Issue.record("no fix was sent") }
    }

    @Test func noTimeoutSetsNoTimerAndWaitsAsLongAsItTakes() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: AsyncLocationManager.noTimeout)
        await rig.source.waitForOpening()
        while rig.gps.manager.subscriptionCount < 1, !Task.isCancelled { await Task.yield() }
        for _ in 0..<100 { await Task.yield() }   // time for a timer to start sleeping, had one been set
        #expect(rig.clock.sleeperCount == 0, "no timer for a timeout that never comes")
        rig.clock.advance(by: AsyncLocationManager.noTimeout * 2)
        let fix = Location.sample(second: 1)
        #expect(rig.source.send(fix))
        #expect(await request.value == .fix(fix))
    }
}
