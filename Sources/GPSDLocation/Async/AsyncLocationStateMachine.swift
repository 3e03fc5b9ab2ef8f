import GPSDCore

/// The bookkeeping of ``AsyncLocationManager``: what is its own, not the manager's. Pending requests'
/// continuations and timers, live update streams and satellite streams. Whether gpsd is watched is the
/// ``LocationManager``'s decision, through the subscriptions each request and stream holds.
///
/// Every way a request can end (a fix, a failure, its timeout, cancellation, ``AsyncLocationManager/stop()``)
/// *takes* the waiter out under the lock and hands back its continuation: whoever takes it resumes it, so it is
/// resumed exactly once. A cancellation that arrives before its request is registered is remembered and
/// honoured at registration.
///
/// ``AsyncLocationManager/stop()`` is final: once it has begun (``beginStop()``), nothing more is registered. A
/// request, stream or observation stream registers under the lock that the stop's steps take, so each is either
/// registered before the stop began, and ended by it, or refused, and ended by its caller at once.
package struct AsyncLocationStateMachine {
    package typealias Continuation = CheckedContinuation<Location, any Error>

    package struct Waiter {
        var continuation: Continuation
        var timeout: Task<Void, Never>?
    }

    private var waiters: [SubscriptionID: Waiter] = [:]
    private var cancelledEarly: Set<SubscriptionID> = []
    /// The live update streams and timelines, by subscription: for ``AsyncLocationManager/stop()`` to end.
    private var streams: [SubscriptionID: StreamOutlet] = [:]
    /// Streams of observations (satellites, status), by observer id: each finishes with ``takeAll(keeping:)``.
    private var observations: [Int: @Sendable () -> Void] = [:]
    /// Whether ``AsyncLocationManager/stop()`` has begun. It never ends.
    private(set) var isStopped = false

    package init() {}

    // MARK: Requests

    /// Registers a request's continuation; false if its task was cancelled before it got here, or the manager
    /// was stopped: it is to end with `CancellationError`.
    mutating func register(_ id: SubscriptionID, _ continuation: Continuation) -> Bool {
        if cancelledEarly.remove(id) != nil || isStopped { return false }
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

    /// Takes out the requests a batch of the manager's notices ends (all at once, so that a concurrent
    /// ``takeAll(keeping:)`` gets all or none of them), each with what ends it. The manager hands them over in the
    /// order it decided them, one batch at a time (``SubscriptionConsumer``). (Streams are consumers of their own,
    /// ``StreamOutlet``.)
    package mutating func settle(_ notices: [SubscriptionNotice]) -> [(Waiter, SubscriptionEvent)] {
        var requests: [(Waiter, SubscriptionEvent)] = []
        for notice in notices {
            // A request ends with a fix or an end; nothing else is decided for it, and nothing else may take it.
            if notice.event.endsARequest, let waiter = waiters.removeValue(forKey: notice.id) {
                requests.append((waiter, notice.event))
            }
        }
        return requests
    }

    // MARK: Streams

    /// Registers a stream's outlet; false if the manager was stopped: the stream is to end at once.
    package mutating func add(_ id: SubscriptionID, _ outlet: StreamOutlet) -> Bool {
        guard !isStopped else { return false }
        streams[id] = outlet
        return true
    }

    mutating func remove(_ id: SubscriptionID) { streams.removeValue(forKey: id) }

    /// An observation stream, known by its observer id and how to finish it; false if the manager was stopped:
    /// the stream is to end at once.
    mutating func add(observation finish: @escaping @Sendable () -> Void, as key: Int) -> Bool {
        guard !isStopped else { return false }
        observations[key] = finish
        return true
    }

    mutating func removeObservation(_ key: Int) { observations.removeValue(forKey: key) }

    // MARK: Stopping

    /// The subscriptions of the live streams.
    package var streamIDs: [SubscriptionID] { Array(streams.keys) }

    /// ``AsyncLocationManager/stop()`` begins, for good: the subscriptions of the live streams, for the manager to
    /// end. From now on nothing registers.
    package mutating func beginStop() -> [SubscriptionID] {
        isStopped = true
        return streamIDs
    }

    /// ``AsyncLocationManager/stop()``, after ``beginStop()``: every request, stream and observation stream, taken
    /// out to be ended; nothing registers after it either. A
    /// stream whose end the manager decided (`endedByTheManager`: it ended it, now or before) stays, to end when
    /// its last notices arrive; the others (not yet subscribed) are finished by the caller.
    package mutating func takeAll(keeping endedByTheManager: Set<SubscriptionID> = []) -> (
        requests: [(SubscriptionID, Waiter)], streams: [StreamOutlet], observations: [@Sendable () -> Void]
    ) {
        isStopped = true
        let ending = streams.filter { !endedByTheManager.contains($0.key) }
        defer {
            waiters.removeAll()
            streams = streams.filter { endedByTheManager.contains($0.key) }
            observations.removeAll()
        }
        return (waiters.map { ($0.key, $0.value) }, Array(ending.values), Array(observations.values))
    }

    /// When the manager value goes: only observation streams can be left (a request or a stream keeps it).
    mutating func takeObservations() -> [@Sendable () -> Void] {
        defer { observations.removeAll() }
        return Array(observations.values)
    }
}

extension SubscriptionEvent {
    /// Whether it is what a one-shot request ends with: a fix, or an end.
    var endsARequest: Bool {
        switch self {
        case .location, .ended: true
        case .rejected, .rejectionEnded, .status, .heading, .headingSilence: false
        }
    }
}
