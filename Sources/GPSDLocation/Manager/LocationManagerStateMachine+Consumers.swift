import GPSDCore

// The consumers' inputs: the delegate's updates and requests, the async bridge's subscriptions, observers.
extension LocationManagerStateMachine {
    // MARK: The delegate

    mutating func startUpdating() -> Decision {
        subscriptions.startDelegateUpdates()
        return demandChanged()
    }

    mutating func stopUpdating() -> Decision {
        subscriptions.stopDelegate()
        return demandChanged()
    }

    mutating func startUpdatingHeading() -> Decision {
        subscriptions.startDelegateHeadings()
        return demandChanged()
    }

    mutating func stopUpdatingHeading() -> Decision {
        subscriptions.stopDelegateHeadings()
        return demandChanged()
    }

    /// A new one-shot request of the delegate, replacing a pending one; it fails after ``requestTimeout``.
    mutating func requestLocation() -> Decision {
        let number = subscriptions.requestDelegateLocation(sawConnection: session.hasReachedGPSD)
        var decision = Decision()
        failRequestsBeforeReaching(into: &decision)
        demandChanged(into: &decision)
        decision.timers.append(.requestTimeout(request: number, after: requestTimeout))
        return decision
    }

    mutating func requestTimedOut(_ number: Int) -> Decision {
        guard subscriptions.delegateRequestTimedOut(number) else { return Decision() }
        let accuracy = subscriptions.desiredAccuracy.map { " within \($0) m" } ?? ""
        let obstacle = status.current.obstacle(lastFailure: session.lastFailure).map { ": \($0)" } ?? ""
        let error = LocationError(
            .locationUnknown, "no fix\(accuracy) in \(requestTimeout)\(obstacle)",
            bestLocation: epochs.latest?.location, status: status.current)
        var decision = Decision()
        decision.call(.failure(error), generation: subscriptions.generation)
        demandChanged(into: &decision, lingering: true)
        return decision
    }

    /// A one-shot request just made fails at once if the watch has not reached gpsd and an attempt has failed
    /// (``SessionStateMachine/failureBeforeReaching``): as it would have had it subscribed a moment earlier.
    private mutating func failRequestsBeforeReaching(into decision: inout Decision) {
        guard let failure = session.failureBeforeReaching else { return }
        end(subscriptions.endRequestsThatNeverConnected(with: failure), into: &decision)
    }

    // MARK: Other consumers

    /// Subscribes `consumer` under a reserved id; `nil` if the id was given back meanwhile (nothing is held).
    mutating func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, _ consumer: any SubscriptionConsumer
    ) -> Decision? {
        guard subscriptions.subscribe(id, request, consumer, sawConnection: session.hasReachedGPSD) else { return nil }
        // A timeline starts with the status it is in once subscribed: the session its subscription opens
        // (`connecting`, told to every timeline), or the status now if subscribing changes none; never the
        // `stopped` of before anything ran.
        var decision = Decision()
        if request.isOneShot { failRequestsBeforeReaching(into: &decision) }
        let before = status.current
        demandChanged(into: &decision)
        if status.current == before { decision.notifications.add(subscriptions.tellStatus(status.current, only: id)) }
        // A request that takes gpsd's held fix asks for it now if a session is open; one opening asks then.
        if request.maximumAge != nil, let open = session.openSession { decision.heldFixRequest = open }
        return decision
    }

    /// Gives an id back: a reservation is dropped, a live subscription ends. Returns what a live subscription
    /// had seen, or `nil` if it had ended already (or never subscribed).
    /// `lingering`: whether a one-shot request's leaving lets the session linger (not when a stop ends it). A stop
    /// looks at demand even when the subscription had ended already: a fix that ended a request just before the
    /// stop gave it back left the session lingering, and the stop closes it.
    mutating func unsubscribe(_ id: SubscriptionID, lingering: Bool = true) -> (EndedSubscription?, Decision) {
        let isOneShot = lingering && subscriptions.subscriptions[id]?.isOneShot == true
        guard var ended = subscriptions.unsubscribe(id) else { return (nil, lingering ? Decision() : demandChanged()) }
        ended.status = status.current
        ended.obstacle = status.current.obstacle(lastFailure: session.lastFailure)
        // A request that timed out or was cancelled leaves the session lingering, as one that got its fix does.
        return (ended, demandChanged(lingering: isOneShot))
    }

    /// Ends the live subscriptions `ids` for their consumer (``SubscriptionTable/endSubscriptions(_:)``); returns
    /// the ids whose end was decided, now or before.
    mutating func endSubscriptions(_ ids: [SubscriptionID]) -> (decision: Decision, ended: [SubscriptionID]) {
        let (notifications, ended) = subscriptions.endSubscriptions(ids)
        var decision = Decision()
        decision.notifications = notifications
        demandChanged(into: &decision)
        return (decision, ended)
    }

    // MARK: Observers

    /// Registers an observer; returns its id, and with `startingWithStatus` tells it the status now, before
    /// anything decided later.
    mutating func addObserver(
        _ observer: @escaping SubscriptionTable.Observer, startingWithStatus: Bool
    ) -> (id: Int, decision: Decision) {
        let id = subscriptions.addObserver(observer)
        var decision = Decision()
        if startingWithStatus { decision.observations.add(.status(status.current), for: subscriptions.observers(only: id)) }
        return (id, decision)
    }

    mutating func removeObserver(_ id: Int) {
        subscriptions.removeObserver(id)
    }
}
