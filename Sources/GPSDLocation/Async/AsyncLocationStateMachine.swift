import GPSDCore

/// The bookkeeping of ``AsyncLocationManager``: what is its own, not the manager's. Pending requests'
/// continuations and timers, live update streams and satellite streams. Whether gpsd is watched is the
/// ``LocationManager``'s decision, through the subscriptions each request and stream holds.
///
/// Every way a request can end (a fix, a failure, its timeout, cancellation, ``AsyncLocationManager/stop()``)
/// *takes* the waiter out under the lock and hands back its continuation: whoever takes it resumes it, so it is
/// resumed exactly once. A cancellation that arrives before its request is registered is remembered and
/// honoured at registration.
package struct AsyncLocationStateMachine {
    package typealias Continuation = CheckedContinuation<Location, any Error>

    package struct Waiter {
        var continuation: Continuation
        var timeout: Task<Void, Never>?
    }

    private var waiters: [SubscriptionID: Waiter] = [:]
    private var cancelledEarly: Set<SubscriptionID> = []
    /// A live update stream or timeline.
    struct Stream {
        var outlet: StreamOutlet
        /// The number of the last notice passed on.
        var received: UInt64 = 0
        /// Notices that arrived ahead of one decided before them, by number.
        var early: [UInt64: SubscriptionEvent] = [:]

        /// Whether its end has arrived, ahead of notices still on their way: they come, then it ends.
        var isEnding: Bool { early.values.contains(where: \.isEnd) }

        /// Takes `notice` in and appends to `ready` the events now due, in order, up to the end. Returns whether
        /// the stream has ended.
        mutating func putInOrder(_ notice: SubscriptionNotice, into ready: inout [SubscriptionEvent]) -> Bool {
            if notice.number == received + 1 && early.isEmpty {   // in order, as nearly always
                received += 1
                ready.append(notice.event)
                return notice.event.isEnd
            }
            early[notice.number] = notice.event
            while ready.last?.isEnd != true, let event = early.removeValue(forKey: received + 1) {
                received += 1
                ready.append(event)
            }
            return ready.last?.isEnd == true
        }
    }

    private var streams: [SubscriptionID: Stream] = [:]
    /// Each stream's events not yet passed on, while a thread is passing them on (it has claimed the queue).
    private var undelivered: [SubscriptionID: DeliveryQueue<SubscriptionEvent>] = [:]
    /// Streams of observations (satellites, status), by observer id: each finishes with ``takeAll(keeping:)``.
    private var observations: [Int: @Sendable () -> Void] = [:]

    package init() {}

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

    /// Events one thread is to pass on to one stream, in order, outside the lock.
    package struct StreamDelivery {
        package var id: SubscriptionID
        package var outlet: StreamOutlet
        package var events: [SubscriptionEvent]
    }

    /// Takes out what a batch of the manager's events settles: the requests it ends (all at once, so that a
    /// concurrent ``takeAll(keeping:)`` gets all or none of them) and the events for streams, in each stream's order.
    ///
    /// Batches are carried out by the threads that decided them, so they can arrive out of order: a notice that
    /// arrives ahead of one decided before it waits here for it. And a stream's events are passed on by one
    /// thread at a time: while one is passing some on (outside the lock), events another thread takes for the
    /// same stream queue here, and the first passes them on next (``nextEvents(for:)``).
    package mutating func settle(_ notices: [SubscriptionNotice]) -> (
        requests: [(Waiter, SubscriptionEvent)], streams: [StreamDelivery]
    ) {
        var requests: [(Waiter, SubscriptionEvent)] = []
        var deliveries: [SubscriptionID: StreamDelivery] = [:]
        var order: [SubscriptionID] = []
        var ready: [SubscriptionEvent] = []
        for notice in notices {
            // A request ends with a fix or an end; nothing else is numbered for it, and nothing else may take it.
            if notice.event.endsARequest, let waiter = waiters.removeValue(forKey: notice.id) {
                requests.append((waiter, notice.event))
                continue
            }
            guard let outlet = streams[notice.id]?.outlet else { continue }
            assert(notice.number > streams[notice.id]!.received && streams[notice.id]!.early[notice.number] == nil,
                   "notice \(notice.number) of \(notice.id) came twice")
            ready.removeAll(keepingCapacity: true)
            // Changed where it is kept, never in a copy, which would copy its early notices for every notice.
            if streams[notice.id]!.putInOrder(notice, into: &ready) { streams[notice.id] = nil }
            guard !ready.isEmpty else { continue }
            if deliveries[notice.id] != nil {
                deliveries[notice.id]?.events += ready
                continue
            }
            // Queued; passed on by this thread if it claims the queue, else by the thread passing some on now.
            undelivered[notice.id, default: DeliveryQueue()].append(contentsOf: ready)
            guard undelivered[notice.id]!.claim(), let events = undelivered[notice.id]!.takeAll() else { continue }
            order.append(notice.id)
            deliveries[notice.id] = StreamDelivery(id: notice.id, outlet: outlet, events: events)
        }
        return (requests, order.compactMap { deliveries[$0] })
    }

    /// For the thread passing stream `id`'s events on: the events queued for it meanwhile, or `nil` when there
    /// are none (it is done, and the next events go to whichever thread takes them).
    package mutating func nextEvents(for id: SubscriptionID) -> [SubscriptionEvent]? {
        guard let queued = undelivered[id]?.takeAll() else {
            undelivered[id] = nil
            return nil
        }
        return queued
    }

    // MARK: Streams

    package mutating func add(_ id: SubscriptionID, _ outlet: StreamOutlet) {
        streams[id] = Stream(outlet: outlet)
    }

    mutating func remove(_ id: SubscriptionID) { streams.removeValue(forKey: id) }

    /// An observation stream, known by its observer id and how to finish it.
    mutating func add(observation finish: @escaping @Sendable () -> Void, as key: Int) { observations[key] = finish }

    mutating func removeObservation(_ key: Int) { observations.removeValue(forKey: key) }

    // MARK: Stopping

    /// The subscriptions of the live streams, for the manager to end.
    package var streamIDs: [SubscriptionID] { Array(streams.keys) }

    /// ``AsyncLocationManager/stop()``: every request, stream and observation stream, taken out to be ended. A
    /// stream whose end is on its way (its `.ended` came ahead of fixes still on another thread, or the manager
    /// ended it before: `endedBefore`) stays, to end when its last notices arrive. A stream another thread is
    /// passing fixes to gets its end queued behind them, for that thread to pass on.
    package mutating func takeAll(keeping endedBefore: Set<SubscriptionID> = []) -> (
        requests: [(SubscriptionID, Waiter)], streams: [StreamOutlet], observations: [@Sendable () -> Void]
    ) {
        let endsLater = streams.filter { $0.value.isEnding || endedBefore.contains($0.key) }
        var ending: [StreamOutlet] = []
        for (id, stream) in streams where endsLater[id] == nil {
            if undelivered[id]?.isClaimed == true { undelivered[id]?.append(.ended(nil)) } else { ending.append(stream.outlet) }
        }
        defer {
            waiters.removeAll()
            streams = endsLater
            observations.removeAll()
        }
        return (waiters.map { ($0.key, $0.value) }, ending, Array(observations.values))
    }

    /// When the manager value goes: only observation streams can be left (a request or a stream keeps it).
    mutating func takeObservations() -> [@Sendable () -> Void] {
        defer { observations.removeAll() }
        return Array(observations.values)
    }
}

extension SubscriptionEvent {
    var isEnd: Bool { if case .ended = self { true } else { false } }

    /// Whether it is what a one-shot request ends with: a fix, or an end.
    var endsARequest: Bool {
        switch self {
        case .location, .ended: true
        case .rejected, .rejectionEnded, .status, .heading: false
        }
    }
}
