import Dispatch
import GPSDCore
import GPSDSystem

/// A running ``LocationManager/realTimeUpdates(desiredAccuracy:distanceFilter:delivery:onEnd:_:)``: it runs while
/// it is held, until it is cancelled or the manager ends it.
///
/// It keeps its manager. Released without `cancel()`, it is cancelled then, on the thread that releases it, as
/// `cancel()` would: so a subscription nobody holds cannot keep gpsd watched.
///
/// ```swift
/// let subscription = manager.realTimeUpdates { fix in controller.steer(towards: fix.coordinate) }
/// // …
/// subscription.cancel()   // when it returns, the handler is not running and will not be called
/// ```
public final class RealTimeSubscription: Sendable {
    /// How long one call of a real-time handler, or of its `onEnd`, may take before a debug build stops the
    /// process: 100 ms, a tenth of a 1 Hz receiver's cycle and one cycle of a 10 Hz one. Checked only in debug
    /// builds, and only with a live gpsd (a replay waits for its consumers); release builds never time a call.
    ///
    /// What is checked is the call's own time: the larger of its thread's CPU time (a handler that spins) and its
    /// wall time less the time the process was not running meanwhile (a handler that sleeps or waits for a lock or
    /// a full pipe). A process stopped during a call (SIGSTOP, Ctrl-Z, a debugger, a cgroup freezer) is not held
    /// to it: a thread of the library's own, ticking while a call is timed, tells how long the process stood
    /// still. On a busy machine that thread can be kept waiting too, which only makes the check more lenient.
    public static let handlerTimeLimit: Duration = .milliseconds(100)

    private let manager: LocationManager
    private let id: SubscriptionID
    private let consumer: RealTimeConsumer

    init(manager: LocationManager, id: SubscriptionID, consumer: RealTimeConsumer) {
        self.manager = manager
        self.id = id
        self.consumer = consumer
    }

    deinit { end() }

    /// Ends the subscription, and returns once nothing more will be called: the epoch it held, if it takes each
    /// epoch once (``EpochDelivery/oncePerEpoch``) and the epoch passes its filters, is passed to the handler;
    /// then `onEnd` is called with `nil` (unless the manager had ended the subscription before: it was called
    /// then); and a call running on another thread has returned. Calling it again does nothing more. If nothing
    /// else wants fixes, the gpsd watch stops and the session's thread ends.
    ///
    /// It blocks its caller until then: while a call under way on another thread returns, and while the session
    /// closes. From async code, `await` the `async` form, which leaves the caller's thread free. The held epoch
    /// and `onEnd` may be called on the caller's thread, before this returns.
    ///
    /// Called from inside a real-time handler or `onEnd` (of this subscription or another), it cannot wait for
    /// what that thread passes on after the call returns: it returns at once, and the calls already decided, the
    /// held epoch and `onEnd` follow once the call has returned. Do not call it while holding a lock that a
    /// handler waits for.
    public func cancel() {
        end()
    }

    /// Cancels as the synchronous `cancel()` does, without blocking the caller: the waiting is done on a thread of
    /// the library's own (never on Swift's cooperative pool), which resumes the caller once nothing more will be
    /// called.
    ///
    /// ```swift
    /// await subscription.cancel()
    /// ```
    public func cancel() async {
        guard !consumer.isFinished else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let cancelling: @Sendable () -> Void = {
                self.end()
                continuation.resume()
            }
            do {
                try SystemThread(name: "gpsd-cancel", cancelling).detach()
            } catch {
                // The system has no thread to spare: one of Dispatch's, still off the cooperative pool.
                DispatchQueue.global().async(execute: cancelling)
            }
        }
    }

    /// Blocks until a thread waits in `cancel()` for the calls under way, or nothing more will be called: for
    /// tests, which then let the handler return.
    package func waitForACancelToWait() {
        consumer.waitForAWaiter()
    }

    /// The manager ends the subscription as its consumer stops: what it held, then its end, decided and handed
    /// to the consumer (on this thread, or on the one passing events on). Then waits for the consumer to have
    /// passed the end on, unless this thread is inside a call that passes events on: that call must return first.
    private func end() {
        manager.endSubscriptions([id])
        guard !RealTimeConsumer.insideCall.isSet else { return }
        consumer.waitUntilFinished()
    }
}
