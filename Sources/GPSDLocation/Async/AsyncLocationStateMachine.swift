/// The bookkeeping of ``AsyncLocationManager``: pending one-shot requests and live update streams.
///
/// Every way a request can end (a fix, a failure, the timeout, cancellation, ``AsyncLocationManager/stop()``)
/// goes through ``resolve(_:)``-style methods that *remove* the waiter and hand back its continuation: whoever
/// removes it resumes it, so it is resumed exactly once. A cancellation that arrives before its request is
/// registered is remembered and honoured at registration.
///
/// A request or stream registers first and then holds the manager's watch (`retainUpdates`), so that nothing
/// that happens meanwhile (a failure of the run it is joining, `stop()`) can miss it. Until its hold is in
/// place it has joined no run yet (`run == nil`), and the end of any run concerns it; if it is ended before
/// the hold is in place, the release it owes is paid by the registering thread (``joined(_:run:)``), so the
/// hold count never dips below what is really held.
struct AsyncLocationStateMachine {
    typealias Continuation = CheckedContinuation<Location, any Error>
    typealias StreamContinuation = AsyncThrowingStream<Location, any Error>.Continuation

    struct Waiter {
        var continuation: Continuation
        /// The manager's run when it joined (`nil` while joining): only the end of that run, or of an earlier
        /// one, concerns it.
        var run: Int? = nil
        var desiredAccuracy: Double?
        var maximumAge: Duration
        var best: Location?
        var timeout: Task<Void, Never>?
    }

    struct Subscriber {
        var continuation: StreamContinuation
        var run: Int? = nil
        var desiredAccuracy: Double?
        var distanceFilter: Double?
        var lastDelivered: Location?
    }

    /// A waiter taken out of the state: the caller resumes it, cancels its timer and releases its demand.
    struct Resumption {
        var id: Int
        var continuation: Continuation
        var result: Result<Location, any Error>
        var timeout: Task<Void, Never>?
    }

    private(set) var waiters: [Int: Waiter] = [:]
    private(set) var subscribers: [Int: Subscriber] = [:]
    private var cancelledEarly: Set<Int> = []
    /// Requests and streams whose hold on the watch is in place.
    private var holding: Set<Int> = []
    /// Requests and streams that ended before their hold was in place: the registering thread releases it.
    private var owing: Set<Int> = []
    private var nextID = 0

    mutating func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: Requests

    /// Registers a waiter, unless it was cancelled before it got here (then it is handed back to be resumed
    /// with `CancellationError`, and holds no demand).
    mutating func register(_ id: Int, _ waiter: Waiter) -> Resumption? {
        if cancelledEarly.remove(id) != nil {
            return Resumption(id: id, continuation: waiter.continuation, result: .failure(CancellationError()))
        }
        waiters[id] = waiter
        return nil
    }

    /// Attaches the timer task of a registered waiter; if the waiter is already gone, the task is handed back
    /// to be cancelled.
    mutating func attach(timeout: Task<Void, Never>, to id: Int) -> Task<Void, Never>? {
        guard waiters[id] != nil else { return timeout }
        waiters[id]?.timeout = timeout
        return nil
    }

    mutating func cancel(_ id: Int) -> Resumption? {
        guard let waiter = waiters.removeValue(forKey: id) else {
            cancelledEarly.insert(id)
            return nil
        }
        return Resumption(id: id, continuation: waiter.continuation, result: .failure(CancellationError()),
                          timeout: waiter.timeout)
    }

    /// Forgets an early-cancellation mark once its request has returned (a cancel that came too late).
    mutating func forget(_ id: Int) { cancelledEarly.remove(id) }

    mutating func timeOut(_ id: Int, after duration: String) -> Resumption? {
        guard let waiter = waiters.removeValue(forKey: id) else { return nil }
        let accuracy = waiter.desiredAccuracy.map { " within \($0) m" } ?? ""
        let error = LocationError(.timedOut, "no fix\(accuracy) in \(duration)", bestLocation: waiter.best)
        return Resumption(id: id, continuation: waiter.continuation, result: .failure(error), timeout: nil)
    }

    // MARK: Holds on the watch

    /// The registering thread's hold on the watch is in place, in run `run`. Returns true if the request or
    /// stream has already ended: the hold must be released at once.
    mutating func joined(_ id: Int, run: Int) -> Bool {
        if owing.remove(id) != nil { return true }
        holding.insert(id)
        waiters[id]?.run = run
        subscribers[id]?.run = run
        return false
    }

    /// A request or stream has ended: true if its hold is in place and is to be released now; otherwise the
    /// registering thread will release it when it gets there.
    mutating func release(_ id: Int) -> Bool {
        if holding.remove(id) != nil { return true }
        owing.insert(id)
        return false
    }

    // MARK: Streams

    mutating func subscribe(_ id: Int, _ subscriber: Subscriber) { subscribers[id] = subscriber }

    /// Removes a stream's subscriber; true if it was there (so its demand is released exactly once).
    mutating func unsubscribe(_ id: Int) -> Bool { subscribers.removeValue(forKey: id) != nil }


    // MARK: Events

    /// A fix from the manager: the waiters it satisfies, and the streams to yield it to.
    mutating func receive(_ location: Location, age: Duration) -> (
        [Resumption], [(StreamContinuation, Location)]
    ) {
        var resumptions: [Resumption] = []
        for (id, waiter) in waiters {
            guard age <= waiter.maximumAge else { continue }
            if location.meets(desiredAccuracy: waiter.desiredAccuracy) {
                waiters.removeValue(forKey: id)
                resumptions.append(Resumption(id: id, continuation: waiter.continuation, result: .success(location),
                                              timeout: waiter.timeout))
            } else if Self.isBetter(location, than: waiter.best) {
                waiters[id]?.best = location
            }
        }
        var yields: [(StreamContinuation, Location)] = []
        guard age == .zero else { return (resumptions, yields) }  // streams carry live fixes only
        for (id, subscriber) in subscribers where location.meets(desiredAccuracy: subscriber.desiredAccuracy) {
            guard location.passes(distanceFilter: subscriber.distanceFilter, since: subscriber.lastDelivered)
            else { continue }
            subscribers[id]?.lastDelivered = location
            yields.append((subscriber.continuation, location))
        }
        return (resumptions, yields)
    }

    /// Run `run` of the manager's source failed, or ended (`error == nil`): every waiter and stream that
    /// joined it (or an earlier run) fails or ends; those that joined a later run go on. Subscribers stay
    /// registered until their stream's termination handler removes them.
    mutating func end(run: Int, with error: LocationError?) -> ([Resumption], [StreamContinuation]) {
        var resumptions: [Resumption] = []
        for (id, waiter) in waiters where waiter.run.map({ $0 <= run }) ?? true {
            waiters.removeValue(forKey: id)
            let failure = error ?? LocationError(
                .locationUnknown, "the source ended before a fix", bestLocation: waiter.best)
            resumptions.append(Resumption(
                id: id, continuation: waiter.continuation, result: .failure(failure), timeout: waiter.timeout))
        }
        return (resumptions, subscribers.values.filter { $0.run.map { $0 <= run } ?? true }.map(\.continuation))
    }

    /// ``AsyncLocationManager/stop()``: every waiter is cancelled; every stream ends.
    mutating func stopAll() -> ([Resumption], [StreamContinuation]) {
        let resumptions = waiters.map { id, waiter in
            Resumption(id: id, continuation: waiter.continuation, result: .failure(CancellationError()),
                       timeout: waiter.timeout)
        }
        waiters.removeAll()
        return (resumptions, subscribers.values.map(\.continuation))
    }

    /// The best fix so far: the more accurate, or the newer when neither is more accurate.
    static func isBetter(_ location: Location, than best: Location?) -> Bool {
        guard let best else { return true }
        switch (location.horizontalAccuracy, best.horizontalAccuracy) {
        case let (new?, old?): return new <= old
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return true
        }
    }
}
