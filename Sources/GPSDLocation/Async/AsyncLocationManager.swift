public import Foundation

/// async/await on top of ``LocationManager``: one fix with ``requestLocation(timeout:maximumAge:desiredAccuracy:)``,
/// a stream of fixes with ``updates(desiredAccuracy:distanceFilter:bufferingPolicy:)``.
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
/// its task, or ``stop()``. Any number of requests and streams may run at once; they share the manager's one
/// gpsd watch, which runs while at least one of them is waiting and stops when the last leaves. Reading from
/// gpsd happens on the manager's own thread, never on Swift's cooperative pool.
public final class AsyncLocationManager: Sendable {
    /// How long ``requestLocation(timeout:maximumAge:desiredAccuracy:)`` waits unless told: 30 seconds.
    public static let defaultTimeout: Duration = .seconds(30)

    /// The default buffering of ``updates(desiredAccuracy:distanceFilter:bufferingPolicy:)``: the newest 16
    /// fixes, so a consumer that falls behind skips old fixes instead of growing memory.
    public static let defaultBufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
        .bufferingNewest(16)

    /// The manager underneath. Its delegate API stays usable alongside.
    public let manager: LocationManager

    private let state = Locked(AsyncLocationStateMachine())
    private let observer = Locked<Int?>(nil)

    /// Wraps a manager.
    public init(manager: LocationManager) {
        self.manager = manager
        let id = manager.addObserver { [weak self] event in self?.receive(event) }
        observer.withLock { $0 = id }
    }

    /// A manager for a live gpsd.
    public convenience init(server: GPSDServer = .default) {
        self.init(manager: LocationManager(server: server))
    }

    /// A manager replaying a recording (gpsd JSON as `gpspipe -w` writes it).
    public convenience init(recording: URL, pace: ReplayPace = .realTime) {
        self.init(manager: LocationManager(recording: recording, pace: pace))
    }

    deinit {
        if let id = observer.withLock({ $0 }) { manager.removeObserver(id) }
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
    ///   - timeout: how long to wait.
    ///   - maximumAge: how old a fix may be to be returned without waiting; `nil` waits for a new one.
    ///   - desiredAccuracy: the horizontal accuracy in metres a fix must have; a fix of unknown accuracy does
    ///     not qualify. `nil` takes any.
    /// - Throws: ``LocationError`` with ``LocationError/Code/timedOut`` (carrying the best fix seen, if any)
    ///   when the timeout comes first; the manager's ``LocationError`` when gpsd is unreachable or the
    ///   connection fails; `CancellationError` when the task is cancelled or ``stop()`` is called.
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
        timeout: C.Instant.Duration,
        maximumAge: Duration? = nil,
        desiredAccuracy: Double? = nil,
        clock: C
    ) async throws -> Location {
        try Task.checkCancellation()
        if let maximumAge, let latest = manager.latestFix, latest.age <= maximumAge,
           latest.location.meets(desiredAccuracy: desiredAccuracy) {
            return latest.location
        }
        let deadline = clock.now.advanced(by: timeout)
        let id = state.withLock { $0.makeID() }
        defer { state.withLock { $0.forget(id) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: AsyncLocationStateMachine.Continuation) in
                let waiter = AsyncLocationStateMachine.Waiter(
                    continuation: continuation, desiredAccuracy: desiredAccuracy, maximumAge: maximumAge ?? .zero)
                if let early = state.withLock({ $0.register(id, waiter) }) {
                    early.continuation.resume(with: early.result)
                    return
                }
                hold(id)
                if maximumAge != nil { manager.poll() }
                let timer = Task { [weak self] in
                    do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                    self?.finish(self?.state.withLock { $0.timeOut(id, after: "\(timeout)") })
                }
                if let orphan = state.withLock({ $0.attach(timeout: timer, to: id) }) { orphan.cancel() }
            }
        } onCancel: {
            finish(state.withLock { $0.cancel(id) })
        }
    }

    // MARK: Streams

    /// Fixes as they come, one per receiver cycle, until the consumer stops iterating, its task is
    /// cancelled, or ``stop()`` is called.
    ///
    /// Each call makes an independent sequence with its own filters; all share one gpsd watch, which stops
    /// when the last consumer is gone. A connection failure ends the sequence by throwing a
    /// ``LocationError``; the end of a recording ends it normally.
    ///
    /// ```swift
    /// for try await fix in gps.updates(desiredAccuracy: 20, distanceFilter: 10) {
    ///     log(fix)
    /// }
    /// ```
    /// - Parameters:
    ///   - desiredAccuracy: only fixes at least this accurate (metres); `nil` takes any.
    ///   - distanceFilter: only fixes at least this far (metres) from the last one delivered.
    ///   - bufferingPolicy: what to keep for a consumer that falls behind; by default
    ///     ``defaultBufferingPolicy``, the newest 16.
    public func updates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        bufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
            AsyncLocationManager.defaultBufferingPolicy
    ) -> AsyncThrowingStream<Location, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Location.self, bufferingPolicy: bufferingPolicy)
        let id = state.withLock { $0.makeID() }
        // The termination handler goes in first: the stream can end (stop(), a failure) before this returns.
        // It holds this object strongly, so a sequence outlives the manager value it came from; the cycle
        // ends with the sequence.
        continuation.onTermination = { _ in
            let release = self.state.withLock { state in state.unsubscribe(id) && state.release(id) }
            if release { self.manager.releaseUpdates() }
        }
        state.withLock { state in
            state.subscribe(id, .init(
                continuation: continuation, desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter))
        }
        hold(id)
        return stream
    }

    /// The satellites the receiver reports seeing and using, as they change, while fixes are being watched
    /// (by a request, a stream or the delegate API). Observing does not by itself start the gpsd watch.
    ///
    /// ```swift
    /// for await sky in gps.satelliteUpdates() { print("\(sky.used)/\(sky.visible) satellites") }
    /// ```
    public func satelliteUpdates() -> AsyncStream<SatelliteCount> {
        let (stream, continuation) = AsyncStream.makeStream(of: SatelliteCount.self, bufferingPolicy: .bufferingNewest(1))
        let last = Locked<SatelliteCount?>(nil)
        let id = manager.addObserver { event in
            switch event {
            case .satellites(let count):
                let changed = last.withLock { last in
                    defer { last = count }
                    return last != count
                }
                if changed { continuation.yield(count) }
            case .location, .failed, .finished: break  // the next watch reports satellites again
            }
        }
        continuation.onTermination = { [manager] _ in manager.removeObserver(id) }
        return stream
    }

    // MARK: Stopping

    /// Ends everything in flight: pending requests throw `CancellationError`, update sequences finish. The
    /// gpsd watch they held stops.
    public func stop() {
        let (resumptions, streams) = state.withLock { $0.stopAll() }
        resumptions.forEach { finish($0) }
        streams.forEach { $0.finish() }
    }

    // MARK: Events

    private func receive(_ event: ManagerEvent) {
        switch event {
        case .location(let location, let age):
            let (resumptions, yields) = state.withLock { $0.receive(location, age: age) }
            resumptions.forEach { finish($0) }
            for (continuation, location) in yields { continuation.yield(location) }
        case .failed(let error, let run):
            end(run: run, with: error)
        case .finished(let run):
            end(run: run, with: nil)
        case .satellites:
            break
        }
    }

    private func end(run: Int, with error: LocationError?) {
        let (resumptions, streams) = state.withLock { $0.end(run: run, with: error) }
        resumptions.forEach { finish($0) }
        for stream in streams {
            if let error { stream.finish(throwing: error) } else { stream.finish() }
        }
    }

    /// Holds the manager's watch for a registered request or stream, and records the run it joined; releases
    /// at once if it has ended meanwhile.
    private func hold(_ id: Int) {
        let run = manager.retainUpdates()
        if state.withLock({ $0.joined(id, run: run) }) { manager.releaseUpdates() }
    }

    /// Resumes a registered waiter taken out of the state, cancels its timer and releases its hold on the
    /// watch (or leaves that to the registering thread, if the hold is not in place yet).
    private func finish(_ resumption: AsyncLocationStateMachine.Resumption?) {
        guard let resumption else { return }
        resumption.timeout?.cancel()
        if state.withLock({ $0.release(resumption.id) }) { manager.releaseUpdates() }
        resumption.continuation.resume(with: resumption.result)
    }
}
