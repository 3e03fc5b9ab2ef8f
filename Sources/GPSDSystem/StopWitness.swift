/// A thread that tells how long the process was not running during a call: stopped (SIGSTOP, Ctrl-Z, a debugger,
/// a cgroup freezer) or, on a busy machine, given no processor.
///
/// No kernel clock gives that time: the monotonic clocks run on through a stop, and a thread's CPU time leaves out
/// sleeping as well as stopping. Nor may a library install a SIGCONT handler: it would change the program's
/// behaviour (poll and nanosleep would return `EINTR`). So a thread of its own watches instead. While a call is in
/// progress it wakes every tick and measures the gap since its last wake; a gap much longer than a tick means it
/// did not run (``StopWitnessState``). With no call in progress it waits on the lock's condition and costs nothing.
///
/// The debug-build check of real-time handlers uses it (GPSDLocation's `RealTimeConsumer`), so that a stop never
/// counts as the handler's own time.
///
/// ```swift
/// let mark = witness.callStarted()
/// call()
/// let end = ContinuousClock.now
/// let notRunning = witness.callEnded(since: mark, seeingEverythingBefore: end)
/// ```
package final class StopWitness: Sendable {
    /// The process's witness, started on first use; nil if the system had no thread to spare.
    package static let shared: StopWitness? = try? StopWitness(tick: .milliseconds(5))

    private let state: Locked<StopWitnessState>

    /// Starts a witness that wakes every `tick` while a call is in progress. Its thread runs for the life of the
    /// process: make one and keep it.
    package init(tick: Duration) throws(SystemError) {
        let state = Locked(StopWitnessState(tick: tick))
        self.state = state
        try SystemThread(name: "gpsd-witness") { Self.watch(state, every: tick) }.detach()
    }

    /// The witness's loop: idle until a call is in progress, then one tick at a time, the sleep outside the lock.
    private static func watch(_ state: Locked<StopWitnessState>, every tick: Duration) {
        while true {
            state.withLock(when: \.isTicking) { _ in }
            Syscall.sleep(for: tick)
            state.withLock { $0.witnessWoke(at: .now) }
        }
    }

    /// A call starts: the witness ticks until it ends. Returns the mark to give back to `callEnded`.
    package func callStarted() -> Duration {
        state.withLock { $0.callStarted(at: .now) }
    }

    /// A call that started at `mark` has ended, and its time is not wanted.
    package func callEnded(since mark: Duration) {
        _ = state.withLock { $0.callEnded(since: mark) }
    }

    /// A call that started at `mark` has ended at `end`: waits until the witness has ended a tick that began after
    /// `end` (on a thread continued from a stop, the call may end before the witness has woken to see the stop),
    /// then returns how long the witness was not running since `mark`. The wait is about one tick, longer only if
    /// the witness waits for a processor.
    package func callEnded(since mark: Duration, seeingEverythingBefore end: ContinuousClock.Instant) -> Duration {
        state.withLock(when: { $0.hasSeenEverythingBefore(end) }) { $0.callEnded(since: mark) }
    }
}
