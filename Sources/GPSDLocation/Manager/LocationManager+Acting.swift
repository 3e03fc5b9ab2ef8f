import Dispatch
import FoundationEssentials
import GPSDCore
import GPSDSystem
import Logging

// The package side of ``LocationManager``: subscriptions for the async bridge, observers, and carrying out what
// the state machine decides.
extension LocationManager {
    // MARK: Subscriptions (the async bridge)

    /// An id to subscribe with. Giving it back with ``unsubscribe(_:)`` before ``subscribe(_:_:consumer:)``
    /// means the subscription never happens.
    package func reserveSubscription() -> SubscriptionID {
        storage.reserveSubscription()
    }

    /// Starts a subscription under a reserved id: the source runs until it is given back or the manager ends
    /// it, which it tells `consumer` (``SubscriptionEvent/ended(_:)``). Returns false if the id was given back
    /// first.
    @discardableResult
    package func subscribe(_ id: SubscriptionID, _ request: SubscriptionRequest, consumer: any SubscriptionConsumer) -> Bool {
        guard let decision = storage.subscribe(id, request, consumer: consumer) else { return false }
        perform(decision)
        return true
    }

    /// ``subscribe(_:_:consumer:)`` with a consumer of its own that calls `handler` for each event.
    @discardableResult
    package func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, handler: @escaping @Sendable (SubscriptionEvent) -> Void
    ) -> Bool {
        subscribe(id, request, consumer: HandlerConsumer(handler))
    }

    /// Gives a subscription (or a reservation) back. Returns what the subscription had seen if it was still
    /// live; `nil` if the manager had ended it already (and told its consumer so, or is about to).
    ///
    /// Never blocks: it is called from cancellation handlers, which Swift's runtime runs holding the status lock
    /// of the task (and of the tasks it descends from), and a session's thread resuming one of those tasks waits
    /// for that lock. The decision is made here; closing the session it may decide (which joins the session's
    /// thread) runs on a thread of its own. ``settleSessions(upTo:)``, and so every stop, still waits for it.
    /// A one-shot request given back lets the session linger (``sessionLinger``), unless `lingering` is false: a stop
    /// that ends it closes the session.
    @discardableResult
    package func unsubscribe(_ id: SubscriptionID, lingering: Bool = true) -> EndedSubscription? {
        let (subscription, decision) = storage.unsubscribe(id, lingering: lingering)
        guard decision.opensOrClosesASession else {
            perform(decision)
            return subscription
        }
        if let thread = try? SystemThread(name: "gpsd-close", { self.perform(decision) }) {
            // This thread decided the step but does not carry it out: a stop on it waits for it like any other.
            storage.handOffTransition()
            thread.detach()
        } else {
            perform(decision)   // the system has no thread to spare: here, as before
        }
        return subscription
    }

    /// Ends the subscriptions `ids` as their consumer stops: what each held back, then its end, is decided and
    /// handed to its consumer (by this thread, or by one handing that consumer's notices over now). Returns the ids
    /// whose end the manager decided, now or before: their consumer gets it (the others were only reserved).
    @discardableResult
    package func endSubscriptions(_ ids: [SubscriptionID]) -> [SubscriptionID] {
        let (ended, decision) = storage.endSubscriptions(ids)
        perform(decision)
        return ended
    }

    /// Registers an observer told of satellite counts, status changes and the end of sessions, in the order
    /// decided, one call at a time, on a thread that carries decisions out, never under the manager's lock; with
    /// `startingWithStatus`, the status now first (perhaps before this returns). Observing does not open a session.
    /// Returns its id.
    @discardableResult
    package func addObserver(
        startingWithStatus: Bool = false, _ observer: @escaping @Sendable (ManagerEvent) -> Void
    ) -> Int {
        let (id, decision) = storage.addObserver(observer, startingWithStatus: startingWithStatus)
        perform(decision)
        return id
    }

    package func removeObserver(_ id: Int) {
        storage.removeObserver(id)
    }

    /// What holds a replay back while a consumer falls behind; `nil` for a live gpsd.
    package var backpressure: ReplayBackpressure? { source.backpressure }

    /// A stream's buffer dropped `count` elements: counted in ``health`` and its metrics.
    package func streamDropped(_ count: Int) { storage.streamDropped(count) }

    /// The newest fix and how long ago the receiver measured it, `nil` if that is not known.
    package var latestFix: (location: Location, age: Duration?)? {
        let now = clock.now
        return storage.latest.map { ($0.location, $0.measured.map { now - $0 }) }
    }

    // MARK: Acting

    typealias Decision = LocationManagerStateMachine.Decision

    /// Carries out what the state machine decided, outside the lock, part by part in the order
    /// ``LocationManagerStateMachine/Decision`` gives. Opening and closing a session report back, and what the
    /// machine decides then is carried out next, on this thread.
    func perform(_ decision: Decision) {
        var next: Decision? = decision
        while let decision = next {
            next = nil
            // Queued in the outbox, in the order decided: each block makes the oldest call still there. A replay
            // waits while too many are queued and not yet returned (``ManagerStorage``).
            for _ in 0..<decision.delegateBlocks { delegateQueue.async { [weak self] in self?.callDelegate() } }
            // This thread took the hand-overs: it hands each consumer its notices until none is left.
            decision.notifications.forEach { storage.hand($0.notices, to: $0.consumer) }
            for batch in decision.observations.batches { storage.tell(batch.events, to: batch.observer, id: batch.id) }
            decision.heldFixRequest?.requestHeldFix()
            for problem in decision.problems {
                storage.logger.warning(
                    "gpsd sent \(problem): \(problem.consequence); further ones are only counted")
            }
            for timer in decision.timers {
                switch timer {
                case .requestTimeout(let request, let delay):
                    schedule(after: delay) { $0.requestTimedOut(request) }
                case .reconnect(let timer, let delay):
                    schedule(after: delay) { $0.reconnectTimerFired(timer) }
                case .linger(let timer, let delay):
                    schedule(after: delay) { $0.lingerTimerFired(timer) }
                case .watchdog(let timer, let delay):
                    let clock = clock
                    schedule(after: delay) { $0.watchdogFired(timer, now: clock.now) }
                case .headingWatch(let timer, let delay):
                    let clock = clock
                    schedule(after: delay) { $0.headingWatchFired(timer, now: clock.now) }
                }
            }
            switch decision.transition {
            case nil: break
            case .open(let number):
                joinUnjoinedSessions()   // one reader thread at a time
                do {
                    let session = try source.openSession { [weak self] events in self?.receive(events, session: number) }
                    next = storage.sessionOpened(number, session)
                } catch {
                    next = storage.sessionFailedToOpen(number, error)
                }
            case .close(let number, let session):
                session.close()
                // It ended itself: its thread ends when this returns, and another joins it.
                next = storage.sessionClosed(number, session, closedItself: session.isOnItsThread)
            }
        }
    }

    /// How many subscriptions are live: for tests that must know every consumer has subscribed.
    package var subscriptionCount: Int { storage.subscriptionCount }

    /// The number of the newest session begun, for ``settleSessions(upTo:)``.
    package var sessionNumber: Int { storage.sessionNumber }

    /// Waits until no session up to `number` is halfway opened or closed on another thread, and until the
    /// threads of the sessions that ended themselves have ended: so that after a stop no thread of ours is
    /// left. A thread carrying out such a step itself does not wait for it.
    package func settleSessions(upTo number: Int) {
        storage.waitUntilSettled(upTo: number)
        joinUnjoinedSessions()
    }

    /// Joins the threads of sessions that were closed on their own thread; one running this is left for later.
    private func joinUnjoinedSessions() {
        for session in storage.takeJoinableSessions() { session.close() }
    }

    /// Runs `decision` on the state machine after `delay`, and carries out what it decides.
    private func schedule(after delay: Duration, _ input: @escaping @Sendable (ManagerStorage) -> Decision) {
        clock.schedule(after: delay) { [weak self] in
            guard let self else { return }
            perform(input(storage))
        }
    }

    /// Events that came together (one read's reports): decided under one lock, in order, and carried out
    /// together, each consumer's notices in one batch, so a stream's consumer wakes once for all of them.
    private func receive(_ events: [SourceEvent], session: Int) {
        let (now, arrival) = (clock.now, clock.arrival)
        perform(storage.handle(events, session: session, now: now, arrival: arrival))
    }

    /// Makes the oldest delegate call decided and not yet made, unless a stop came after it was decided; while
    /// it runs, ``stopUpdatingLocation()`` on another thread waits for it. Once it has returned, a replay waiting
    /// for the delegate may go on.
    private func callDelegate() {
        guard let (delegate, call) = storage.nextDelegateCall() else { return }
        switch call.kind {
        case .locations(let locations): delegate.locationManager(self, didUpdateLocations: locations)
        case .failure(let error): delegate.locationManager(self, didFailWithError: error)
        case .status(let status): delegate.locationManager(self, didChangeStatus: status)
        case .rejection(let rejection): delegate.locationManager(self, didRejectFixes: rejection)
        case .heading(let heading): delegate.locationManager(self, didUpdateHeading: heading)
        case .satellites(let sky): delegate.locationManager(self, didUpdateSatellites: sky)
        }
        storage.delegateCallReturned(call)
    }
}
