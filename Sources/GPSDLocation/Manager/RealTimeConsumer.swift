import GPSDCore
import GPSDSystem

/// The consumer of one real-time subscription (``LocationManager/realTimeUpdates(desiredAccuracy:distanceFilter:delivery:onEnd:_:)``):
/// it calls the handler with each fix, and `onEnd` with the end, synchronously on the thread that hands the
/// notices over, with no queue and no task in between.
///
/// The manager hands a consumer its notices in the order decided, one batch at a time (``SubscriptionConsumer``),
/// so calls never overlap and need no putting in order here. Once the end has been passed on, nothing more is
/// called (``isFinished``), which `RealTimeSubscription.cancel()` waits for.
final class RealTimeConsumer: SubscriptionConsumer {
    private struct State {
        /// Whether the end has been passed on: nothing more is called.
        var isFinished = false
        /// How many threads wait in ``RealTimeConsumer/waitUntilFinished()``.
        var waiting = 0
    }

    /// Whether the calling thread is inside a real-time handler or `onEnd` (of any subscription): there,
    /// `RealTimeSubscription.cancel()` must not wait for what this thread passes on after the call returns.
    static let insideCall = ThreadFlag()

    private let state = Locked(State())
    private let handler: @Sendable (Location) -> Void
    private let onEnd: (@Sendable (LocationError?) -> Void)?
    /// Whether each call's own time is checked against ``RealTimeSubscription/handlerTimeLimit`` (debug builds,
    /// live sources).
    private let checksTime: Bool

    init(handler: @escaping @Sendable (Location) -> Void, onEnd: (@Sendable (LocationError?) -> Void)?, checksTime: Bool) {
        self.handler = handler
        self.onEnd = onEnd
        self.checksTime = checksTime
    }

    /// Whether the end has been passed on and nothing more will be called.
    var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Waits until the end has been passed on and no thread is inside the handler or `onEnd` any more.
    func waitUntilFinished() {
        state.withLock { $0.waiting += 1 }
        state.withLock(when: \.isFinished) { $0.waiting -= 1 }
    }

    /// Blocks until a thread waits in ``waitUntilFinished()`` (or it has finished): for tests.
    func waitForAWaiter() {
        state.withLock(when: { $0.waiting > 0 || $0.isFinished }) { _ in }
    }

    func receive(_ notices: [SubscriptionNotice]) {
        Self.insideCall.whileSet {
            for notice in notices { pass(notice.event) }
        }
        if case .ended? = notices.last?.event { state.withLock { $0.isFinished = true } }
    }

    private func pass(_ event: SubscriptionEvent) {
        switch event {
        case .location(let location): timed { handler(location) }
        case .ended(let error): if let onEnd { timed { onEnd(error) } }
        case .rejected, .rejectionEnded, .status, .heading, .headingSilence: break   // a real-time subscription follows fixes only
        }
    }

    /// Runs `call`; where time is checked, stops the process if the call's own time was longer than the limit.
    ///
    /// A call's own time is the larger of its thread's CPU time, which catches a handler that spins, and its wall
    /// time less the time the process was not running meanwhile, which catches one that sleeps or waits (a lock, a
    /// full pipe) without counting a stop (SIGSTOP, Ctrl-Z, a debugger, a cgroup freezer) against it. No clock
    /// gives the time not running: ``StopWitness``, a thread that ticks while a call is timed, tells it. Only a
    /// call whose wall time is over the limit asks it, and waits (about one tick) until it has seen the call's end.
    private func timed(_ call: () -> Void) {
        guard checksTime else { return call() }
        let witness = StopWitness.shared
        let mark = witness?.callStarted() ?? .zero
        let startCPU = Syscall.threadCPUTime()
        let start = ContinuousClock.now
        call()
        let end = ContinuousClock.now
        let time = CallTime(cpu: Syscall.threadCPUTime() - startCPU, wall: start.duration(to: end))
        guard time.wall > RealTimeSubscription.handlerTimeLimit else {
            witness?.callEnded(since: mark)
            return
        }
        // Without a witness (the system had no thread for it) a stop cannot be told from a sleep: then only the CPU
        // time is held against the call, so that a stop never ends a correct program.
        let notRunning = witness?.callEnded(since: mark, seeingEverythingBefore: end) ?? time.wall
        let own = time.own(notRunning: notRunning)
        guard own <= RealTimeSubscription.handlerTimeLimit else {
            preconditionFailure("""
                a real-time handler of GPSDLocation blocked the thread reading gpsd for \(own) of its own (CPU time \
                \(time.cpu); wall time \(time.wall), of which the process was not running \(notRunning)); it must \
                not block (RealTimeSubscription.handlerTimeLimit: \(RealTimeSubscription.handlerTimeLimit), checked \
                in debug builds)
                """)
        }
    }

    /// The times of one call of a handler or `onEnd`.
    struct CallTime {
        /// The CPU time its thread used.
        var cpu: Duration
        /// The time from its start to its end on the monotonic clock, stops included.
        var wall: Duration

        /// The call's own time, given how long the process was not running during it: the larger of its CPU time
        /// and its wall time less `notRunning` (which may cover more than the call: a witness's gap can begin
        /// before it).
        func own(notRunning: Duration) -> Duration {
            max(cpu, wall - min(notRunning, wall))
        }
    }
}
