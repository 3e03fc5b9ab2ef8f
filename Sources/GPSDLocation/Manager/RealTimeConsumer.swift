import GPSDCore
import GPSDSystem

/// The consumer of one real-time subscription (``LocationManager/realTimeUpdates(desiredAccuracy:distanceFilter:delivery:onEnd:_:)``):
/// it calls the handler with each fix, and `onEnd` with the end, synchronously on the thread that hands the
/// notices over, with no queue and no task in between.
///
/// Notices decided on two threads (fixes on the session's, the end on a caller's or a timer's) can arrive out of
/// order, and at the same time. Under its lock the consumer puts them back in the order decided (each notice's
/// number) and lets one thread at a time pass events on: a thread that finds another passing events leaves its
/// own in ``State/due`` for that one, and returns. The lock is never held while the handler runs. Once the end has
/// been passed on, nothing more is called (``isFinished``), which `RealTimeSubscription.cancel()` waits for.
final class RealTimeConsumer: SubscriptionConsumer {
    private struct State {
        /// The number of the last notice taken in, in order.
        var received: UInt64 = 0
        /// Notices that arrived ahead of one decided before them, by number.
        var early: [UInt64: SubscriptionEvent] = [:]
        /// Events in order and not passed on yet, while a thread is passing events on.
        var due: [SubscriptionEvent] = []
        /// The thread passing events on now: it passes on what other threads leave in `due`.
        var deliverer: UInt?
        /// Whether the end has been taken in: nothing after it is.
        var endTaken = false
        /// Whether the end has been passed on and no thread passes anything on any more.
        var isFinished = false
        /// How many threads wait in ``RealTimeConsumer/waitUntilFinished()``.
        var waiting = 0

        /// Takes `notice` in: it, and the early ones it was the last missing before, go to `due`.
        mutating func takeIn(_ notice: SubscriptionNotice) {
            guard !endTaken else { return }
            guard notice.number == received + 1 else {
                early[notice.number] = notice.event
                return
            }
            accept(notice.event)
            while !endTaken, !early.isEmpty, let event = early.removeValue(forKey: received + 1) { accept(event) }
        }

        private mutating func accept(_ event: SubscriptionEvent) {
            received += 1
            due.append(event)
            if case .ended = event { endTaken = true }
        }

        /// Whether `notices` follow on at once from what was taken in, with nothing due or early: the usual case,
        /// which needs no copy.
        func followsOn(_ notices: [SubscriptionNotice]) -> Bool {
            guard due.isEmpty, early.isEmpty, !endTaken else { return false }
            for (offset, notice) in notices.enumerated() where notice.number != received + 1 + UInt64(offset) {
                return false
            }
            return true
        }
    }

    /// Whether the calling thread is inside a real-time handler or `onEnd` (of any subscription): there,
    /// `RealTimeSubscription.cancel()` must not wait for what this thread passes on after the call returns.
    static let insideCall = ThreadFlag()

    private let state = Locked(State())
    private let handler: @Sendable (Location) -> Void
    private let onEnd: (@Sendable (LocationError?) -> Void)?
    /// Whether each call is timed against ``RealTimeSubscription/handlerTimeLimit`` (debug builds, live sources).
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
        let thread = SystemThread.currentID
        // In order and nobody passing events on, as nearly always: this thread passes these notices on as they
        // are. Otherwise they are put in order, and this thread passes on what is due unless another does.
        let inOrder = state.withLock { state -> Bool? in
            if state.deliverer == nil, state.followsOn(notices) {
                state.received += UInt64(notices.count)
                if case .ended? = notices.last?.event { state.endTaken = true }
                state.deliverer = thread
                return true
            }
            for notice in notices { state.takeIn(notice) }
            guard state.deliverer == nil, !state.due.isEmpty else { return nil }
            state.deliverer = thread
            return false
        }
        guard let inOrder else { return }
        Self.insideCall.whileSet {
            if inOrder {
                for notice in notices { pass(notice.event) }
            }
            // What is due now: left by other threads meanwhile, or put in order above.
            while let events = takeDue() {
                for event in events { pass(event) }
            }
        }
    }

    /// For the thread passing events on: the events due, or `nil` when none is (it stops passing events on, and
    /// the next thread with notices does).
    private func takeDue() -> [SubscriptionEvent]? {
        state.withLock { state in
            guard !state.due.isEmpty else {
                state.deliverer = nil
                if state.endTaken { state.isFinished = true }
                return nil
            }
            defer { state.due = [] }
            return state.due
        }
    }

    private func pass(_ event: SubscriptionEvent) {
        switch event {
        case .location(let location): timed { handler(location) }
        case .ended(let error): if let onEnd { timed { onEnd(error) } }
        case .rejected, .rejectionEnded, .status, .heading: break   // a real-time subscription follows fixes only
        }
    }

    /// Runs `call`; where time is checked, stops the process if it took longer than the limit.
    private func timed(_ call: () -> Void) {
        guard checksTime else { return call() }
        let start = ContinuousClock.now
        call()
        let took = ContinuousClock.now - start
        guard took <= RealTimeSubscription.handlerTimeLimit else {
            preconditionFailure("""
                a real-time handler of GPSDLocation blocked the thread reading gpsd for \(took); it must not \
                block (RealTimeSubscription.handlerTimeLimit: \(RealTimeSubscription.handlerTimeLimit), \
                checked in debug builds)
                """)
        }
    }
}
