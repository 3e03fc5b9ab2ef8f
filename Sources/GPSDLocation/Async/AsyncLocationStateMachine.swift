/// The bookkeeping of ``AsyncLocationManager``: what is its own, not the manager's. Pending requests'
/// continuations and timers, live update streams and satellite streams. Whether gpsd is watched is the
/// ``LocationManager``'s decision, through the subscriptions each request and stream holds.
///
/// Every way a request can end (a fix, a failure, its timeout, cancellation, ``AsyncLocationManager/stop()``)
/// *takes* the waiter out under the lock and hands back its continuation: whoever takes it resumes it, so it is
/// resumed exactly once. A cancellation that arrives before its request is registered is remembered and
/// honoured at registration.
struct AsyncLocationStateMachine {
    typealias Continuation = CheckedContinuation<Location, any Error>
    typealias StreamContinuation = AsyncThrowingStream<Location, any Error>.Continuation

    struct Waiter {
        var continuation: Continuation
        var timeout: Task<Void, Never>?
    }

    private var waiters: [SubscriptionID: Waiter] = [:]
    private var cancelledEarly: Set<SubscriptionID> = []
    private var streams: [SubscriptionID: (continuation: StreamContinuation, drops: DropCounter)] = [:]
    /// Streams of observations (satellites, status), by observer id: each finishes with ``takeAll()``.
    private var observations: [Int: @Sendable () -> Void] = [:]

    // MARK: Requests

    /// Registers a request's continuation; false if its task was cancelled before it got here.
    mutating func register(_ id: SubscriptionID, _ continuation: Continuation) -> Bool {
        if cancelledEarly.remove(id) != nil { return false }
        waiters[id] = Waiter(continuation: continuation)
        return true
    }

    /// Starts the timer of a registered request (`makeTimer` makes its task) and attaches it in the same step,
    /// so whatever ends the request later finds its timer to cancel. A request that has ended meanwhile gets
    /// none.
    mutating func attachTimer(to id: SubscriptionID, _ makeTimer: () -> Task<Void, Never>) {
        guard waiters[id] != nil else { return }
        waiters[id]?.timeout = makeTimer()
    }

    /// Takes a request out, to be resumed by the caller; nil if something else took it first.
    mutating func take(_ id: SubscriptionID) -> Waiter? { waiters.removeValue(forKey: id) }

    /// Takes a request out for its task's cancellation; one not registered yet is marked, and refused at
    /// registration.
    mutating func cancel(_ id: SubscriptionID) -> Waiter? {
        guard let waiter = waiters.removeValue(forKey: id) else {
            cancelledEarly.insert(id)
            return nil
        }
        return waiter
    }

    /// Forgets an early-cancellation mark once its request has returned (a cancel that came too late).
    mutating func forget(_ id: SubscriptionID) { cancelledEarly.remove(id) }

    /// Takes out what a batch of the manager's events settles: the requests it ends (all at once, so that a
    /// concurrent ``takeAll()`` gets all or none of them) and the stream continuations it concerns.
    mutating func take(_ events: [(SubscriptionID, SubscriptionEvent)]) -> (
        requests: [(Waiter, SubscriptionEvent)], streams: [(StreamContinuation, DropCounter, SubscriptionEvent)]
    ) {
        var requests: [(Waiter, SubscriptionEvent)] = []
        var streamEvents: [(StreamContinuation, DropCounter, SubscriptionEvent)] = []
        for (id, event) in events {
            if let waiter = waiters.removeValue(forKey: id) {
                requests.append((waiter, event))
            } else if let stream = streams[id] {
                streamEvents.append((stream.continuation, stream.drops, event))
                if case .ended = event { streams[id] = nil }
            }
        }
        return (requests, streamEvents)
    }

    // MARK: Streams

    mutating func add(_ id: SubscriptionID, _ stream: StreamContinuation, drops: DropCounter) {
        streams[id] = (stream, drops)
    }

    mutating func remove(_ id: SubscriptionID) { streams.removeValue(forKey: id) }

    /// An observation stream, known by its observer id and how to finish it.
    mutating func add(observation finish: @escaping @Sendable () -> Void, as key: Int) { observations[key] = finish }

    mutating func removeObservation(_ key: Int) { observations.removeValue(forKey: key) }

    // MARK: Stopping

    /// ``AsyncLocationManager/stop()``: every request, stream and observation stream, taken out to be ended.
    mutating func takeAll() -> (
        requests: [(SubscriptionID, Waiter)], streams: [StreamContinuation], observations: [@Sendable () -> Void]
    ) {
        defer {
            waiters.removeAll()
            streams.removeAll()
            observations.removeAll()
        }
        return (waiters.map { ($0.key, $0.value) }, streams.values.map(\.continuation), Array(observations.values))
    }

    /// When the manager value goes: only observation streams can be left (a request or a stream keeps it).
    mutating func takeObservations() -> [@Sendable () -> Void] {
        defer { observations.removeAll() }
        return Array(observations.values)
    }
}
