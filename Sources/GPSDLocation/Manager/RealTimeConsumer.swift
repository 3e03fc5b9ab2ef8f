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
        Self.insideCall.whileSet {
            for notice in notices { pass(notice.event) }
        }
        if case .ended? = notices.last?.event { state.withLock { $0.isFinished = true } }
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
