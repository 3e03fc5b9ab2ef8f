import Dispatch
public import FoundationEssentials
import GPSDCore
import GPSDSystem

/// async/await on top of ``LocationManager``: one fix with ``requestLocation(timeout:maximumAge:desiredAccuracy:)``,
/// a stream of fixes with ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``.
///
/// ```swift
/// let gps = AsyncLocationManager()                               // gpsd on localhost:2947
/// let here = try await gps.requestLocation(timeout: .seconds(10), maximumAge: .seconds(2))
/// print(here.coordinate)
///
/// for try await fix in gps.updates(distanceFilter: 5) {
///     print(fix.coordinate, fix.speed ?? 0)
/// }
/// ```
///
/// Every request resumes exactly once, whatever comes first: a fix, a failure, its timeout, cancellation of
/// its task, or ``stop()``. Any number of requests and streams may run at once; each holds a subscription of
/// the manager, which watches gpsd while at least one is live and stops when the last is given back. Reading
/// from gpsd happens on the manager's own thread, never on Swift's cooperative pool.
public final class AsyncLocationManager: Sendable {
    /// How long ``requestLocation(timeout:maximumAge:desiredAccuracy:)`` waits unless told: 30 seconds.
    public static let defaultTimeout: Duration = .seconds(30)

    /// The timeout that never comes: ``requestLocation(timeout:maximumAge:desiredAccuracy:)`` given it waits as
    /// long as it takes. It is a century; any longer timeout means the same, and none sets a timer.
    ///
    /// ```swift
    /// let fix = try await gps.requestLocation(timeout: AsyncLocationManager.noTimeout)
    /// ```
    public static let noTimeout: Duration = .never

    /// What ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)`` kept by default before its
    /// default kept a burst for a consumer that keeps up: the newest 16 fixes, whatever came at once.
    @available(*, deprecated, message: "Leave bufferingPolicy out (nil) for the default, which keeps the newest 16 and any fix that waited 2 s or less, at most 1024; .bufferingNewest(16) still keeps only the newest 16")
    public static let defaultBufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
        .bufferingNewest(16)

    /// The manager underneath. Its delegate API stays usable alongside.
    public let manager: LocationManager

    let state: Locked<AsyncLocationStateMachine>
    /// What this object's requests subscribe with.
    let receiver: Receiver

    /// Wraps a manager.
    public init(manager: LocationManager) {
        self.manager = manager
        let state = Locked(AsyncLocationStateMachine())
        self.state = state
        self.receiver = Receiver(state: state)
    }

    /// A manager for a live gpsd.
    public convenience init(server: GPSDServer = .default) {
        self.init(manager: LocationManager(server: server))
    }

    /// A manager replaying a recording (gpsd JSON as `gpspipe -w` writes it).
    public convenience init(recording: URL, pace: ReplayPace = .realTime) {
        self.init(manager: LocationManager(recording: recording, pace: pace))
    }

    /// A manager replaying a recording held in memory (gpsd JSON reports, one per line); `name` is what
    /// messages call it.
    public convenience init(recording contents: [UInt8], named name: String, pace: ReplayPace = .realTime) {
        self.init(manager: LocationManager(recording: contents, named: name, pace: pace))
    }

    /// How the manager has fared since it was made (``LocationManager/health``): read at once, without a task hop.
    ///
    /// ```swift
    /// print(gps.health.reconnects, gps.health.fixesPerSecond ?? 0, gps.health.timeInStatus.fix)
    /// ```
    public var health: LocationHealth { manager.health }

    deinit {
        // Requests and update streams keep this object; satellite and status streams do not, and end with it.
        for finish in state.withLock({ $0.takeObservations() }) { finish() }
    }

    // MARK: One fix

    /// One fix.
    ///
    /// Returns the newest fix at once if it is no older than `maximumAge` (measured from when it reached
    /// gpsd's client, on the monotonic clock); when there is none yet and `maximumAge` is given, asks gpsd for
    /// the fix it holds (`?POLL;`) rather than waiting for the receiver's next cycle. Otherwise waits for the
    /// next fix that meets `desiredAccuracy`.
    ///
    /// ```swift
    /// let fix = try await gps.requestLocation(timeout: .seconds(5), desiredAccuracy: 10)
    /// ```
    /// - Parameters:
    ///   - timeout: how long to wait; ``noTimeout`` (a century, or any longer duration) waits without limit.
    ///   - maximumAge: how old a fix may be to be returned without waiting; `nil` waits for a new one.
    ///   - desiredAccuracy: the horizontal accuracy in metres a fix must have; a fix of unknown accuracy does
    ///     not qualify. `nil` takes any.
    /// What stands in the way is said the same way whatever it is. A request made once the manager's watch has
    /// reached gpsd (a stream running, say) waits out everything that may pass until its timeout: reconnection, gpsd
    /// unreachable during a backoff, no receiver, a receiver gone, waiting for a fix. The timeout's error names
    /// it: ``LocationError/status`` is the manager's status then, and the message says it first
    /// (`no fix in 2.0 seconds: receiver gone (/dev/ttyUSB0)`, `no fix in 2.0 seconds: gpsd unreachable: cannot
    /// connect to gpsd at localhost:2947: connection refused; reconnecting (attempt 3)`).
    ///
    /// ```swift
    /// do {
    ///     let fix = try await gps.requestLocation(timeout: .seconds(2))
    /// } catch let error as LocationError where error.code == .timedOut {
    ///     if case .deviceGone? = error.status { alarm("receiver unplugged") }
    /// }
    /// ```
    /// - Throws: ``LocationError`` with ``LocationError/Code/timedOut`` (carrying the best fix seen, if any, and
    ///   the status that stood in the way) when the timeout comes first; ``LocationError/Code/gpsdUnavailable``
    ///   when the watch has not reached gpsd since it began and an attempt to connect fails, or at once if one has
    ///   (gpsd is not there: a program started without it learns so at once, whether the request or a stream
    ///   started the watch); the manager's ``LocationError`` for a failure that ends
    ///   the watch (see ``LocationManager/reconnectPolicy``); `CancellationError` when the task is cancelled or
    ///   ``stop()`` is called, and at once when it was called before.
    public func requestLocation(
        timeout: Duration = AsyncLocationManager.defaultTimeout,
        maximumAge: Duration? = nil,
        desiredAccuracy: Double? = nil
    ) async throws -> Location {
        try await requestLocation(
            timeout: timeout, maximumAge: maximumAge, desiredAccuracy: desiredAccuracy, clock: .continuous)
    }

    /// ``requestLocation(timeout:maximumAge:desiredAccuracy:)`` with its timeout measured on `clock`.
    ///
    /// ```swift
    /// let fix = try await gps.requestLocation(timeout: .seconds(5), clock: SuspendingClock())
    /// ```
    public func requestLocation<C: Clock>(
        timeout: Duration,
        maximumAge: Duration? = nil,
        desiredAccuracy: Double? = nil,
        clock: C
    ) async throws -> Location where C.Duration == Duration {
        try Task.checkCancellation()
        // After stop(), not even a fix at hand: a request ends as those pending at the stop did. (Registration
        // below decides it again, under the lock the stop takes.)
        if state.withLock({ $0.isStopped }) { throw CancellationError() }
        if let maximumAge, let latest = manager.latestFix, let age = latest.age, age <= maximumAge,
           latest.location.meets(desiredAccuracy: desiredAccuracy) {
            return latest.location
        }
        let timeout = timeout.asTimeout   // a clock cannot sleep until a deadline its seconds cannot hold
        let deadline = timeout.meansNever ? nil : clock.now.advanced(by: timeout)
        let id = manager.reserveSubscription()
        defer { state.withLock { $0.forget(id) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: AsyncLocationStateMachine.Continuation) in
                guard state.withLock({ $0.register(id, continuation) }) else {
                    manager.unsubscribe(id)
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let request = SubscriptionRequest.oneShot(maximumAge: maximumAge, desiredAccuracy: desiredAccuracy)
                guard manager.subscribe(id, request, consumer: receiver), let deadline else { return }
                state.withLock { state in
                    state.attachTimer(to: id) {
                        Task { [weak self] in
                            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                            self?.timeOut(id, after: timeout, maximumAge: maximumAge, desiredAccuracy: desiredAccuracy)
                        }
                    }
                }
            }
        } onCancel: {
            end(state.withLock { $0.cancel(id) }, id, with: .failure(CancellationError()))
        }
    }

    // MARK: Stopping

    /// Ends everything in flight, and returns once it has ended: pending requests throw `CancellationError`;
    /// update, satellite and status sequences finish. An update sequence of ``EpochDelivery/oncePerEpoch`` first
    /// gets the epochs it still held (one per receiver), as they stand, if they pass its filters. The gpsd watch
    /// they held stops: when this returns, if nothing else wants fixes, the session's thread has ended. A
    /// sequence whose last fixes are being passed on by another thread (the session's, or another `stop()`'s)
    /// finishes when that thread is done with them, which may be just after this returns: read it to its end.
    ///
    /// The stop is final: a request made afterwards throws `CancellationError` at once, as pending ones do, and a
    /// sequence made afterwards (of fixes, updates, headings, satellites or status) ends at once, so a task that
    /// still asks after a shutdown handler's stop does not start the gpsd watch again. A request or sequence made
    /// while the stop runs ends with it, either way. The ``manager`` underneath is not stopped for good: its
    /// delegate API goes on, and a new `AsyncLocationManager(manager: gps.manager)` watches again.
    ///
    /// The caller's thread is never blocked: the wait for the session's thread runs on a thread of this
    /// manager's own (never on Swift's cooperative pool), which resumes the caller when the stop has ended. A stop
    /// that has begun runs to its end: cancelling the caller's task does not cut it short. A synchronous handler
    /// that cannot wait starts it in a task:
    ///
    /// ```swift
    /// try await withGracefulShutdownHandler {
    ///     for try await fix in gps.updates() { log(fix) }   // ends once the stop has ended the sequence
    /// } onGracefulShutdown: {
    ///     Task { await gps.stop() }
    /// }
    /// ```
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stopping: @Sendable () -> Void = {
                self.stopBlocking()
                continuation.resume()
            }
            do {
                try SystemThread(name: "gpsd-stop", stopping).detach()
            } catch {
                // The system has no thread to spare: one of Dispatch's, still off the cooperative pool.
                DispatchQueue.global().async(execute: stopping)
            }
        }
    }

    /// ``stop()`` on the caller's thread, which it blocks until the stop has ended. For tests that stop from a
    /// thread of their own at a chosen instant: inside a session's opening, or racing another thread.
    package func stopBlocking() {
        let session = manager.sessionNumber
        // The manager ends the streams: a stream that takes each epoch once gets the epoch it held, then ends. Those
        // it ended, now or before, end by its notices; the rest (not yet subscribed) are finished here.
        let ended = manager.endSubscriptions(state.withLock { $0.beginStop() })
        let (requests, streams, observations) = state.withLock { $0.takeAll(keeping: Set(ended)) }
        // A stop closes the session its requests leave: it does not linger for them.
        for (id, waiter) in requests { end(waiter, id, with: .failure(CancellationError()), lingering: false) }
        for stream in streams { stream.finish() }
        for finish in observations { finish() }
        manager.settleSessions(upTo: session)
    }

    // MARK: Ending requests

    /// Receives the manager's events for the requests of one ``AsyncLocationManager``, a batch at a time, in the
    /// order decided and never two batches at once (``SubscriptionConsumer``): under one lock it takes out every
    /// request the batch ends; then, unlocked, it resumes them.
    final class Receiver: SubscriptionConsumer {
        private let state: Locked<AsyncLocationStateMachine>

        init(state: Locked<AsyncLocationStateMachine>) { self.state = state }

        func receive(_ notices: [SubscriptionNotice]) {
            for (waiter, event) in state.withLock({ $0.settle(notices) }) {
                waiter.timeout?.cancel()
                switch event {
                case .location(let location): waiter.continuation.resume(returning: location)
                case .rejected, .rejectionEnded, .status, .heading, .headingSilence:
                    assertionFailure("settle hands a request only what ends it")
                case .ended(let error):
                    waiter.continuation.resume(
                        throwing: error ?? LocationError(.locationUnknown, "the source ended before a fix"))
                }
            }
        }
    }

    /// The timeout gives the subscription back first: if the manager has ended it already, what ended it (a fix,
    /// a failure) resumes the request; otherwise the best fix it saw is known before the request is taken. The error
    /// says what the request waited for: a fix of its accuracy (and the best it saw), a held fix young enough (and
    /// why gpsd's was not).
    private func timeOut(_ id: SubscriptionID, after timeout: Duration, maximumAge: Duration?, desiredAccuracy: Double?) {
        guard let ended = manager.unsubscribe(id), let waiter = state.withLock({ $0.take(id) }) else { return }
        var message = "no fix" + (desiredAccuracy.map { " within \(JSONText.number($0)) m" } ?? "") + " in \(timeout)"
        // What stood in the way first: the status then (gpsd unreachable, receiver gone, …), if fixes were not coming.
        var reasons: [String] = ended.obstacle.map { [$0] } ?? []
        if let desiredAccuracy, let best = ended.best {
            let accuracy = best.horizontalAccuracy.map { "±" + JSONText.fixed($0, digits: 1) + " m" } ?? "of unknown accuracy"
            reasons.append("the best fix was \(accuracy), wanted \(JSONText.number(desiredAccuracy)) m")
        }
        if let maximumAge, let held = ended.refusedHeldFix {
            let age = held.arrival?.delay.map { "\($0.secondsText) old" } ?? "of unknown age (its time is not gpsd's clock's)"
            reasons.append("the fix gpsd held was \(age), wanted at most \(maximumAge.secondsText)")
        }
        if !reasons.isEmpty { message += ": " + reasons.joined(separator: "; ") }
        waiter.continuation.resume(throwing: LocationError(
            .timedOut, message, bestLocation: ended.best ?? ended.refusedHeldFix, status: ended.status))
    }

    /// Ends a request taken out of the state: cancels its timer, gives its subscription (or reservation) back,
    /// then resumes it.
    private func end(
        _ waiter: AsyncLocationStateMachine.Waiter?, _ id: SubscriptionID, with result: Result<Location, any Error>,
        lingering: Bool = true
    ) {
        guard let waiter else { return }
        waiter.timeout?.cancel()
        manager.unsubscribe(id, lingering: lingering)
        waiter.continuation.resume(with: result)
    }
}
