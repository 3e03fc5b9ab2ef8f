import GPSDCore

// The consumers' inputs: the delegate's updates and requests, the async bridge's subscriptions, observers.
extension LocationManagerStateMachine {
    // MARK: The delegate

    mutating func startUpdating() -> [Action] {
        subscriptions.startDelegateUpdates()
        return demandChanged()
    }

    mutating func stopUpdating() -> [Action] {
        subscriptions.stopDelegate()
        return demandChanged()
    }

    mutating func startUpdatingHeading() -> [Action] {
        subscriptions.startDelegateHeadings()
        return demandChanged()
    }

    mutating func stopUpdatingHeading() -> [Action] {
        subscriptions.stopDelegateHeadings()
        return demandChanged()
    }

    /// A new one-shot request of the delegate, replacing a pending one; it fails after ``requestTimeout``.
    mutating func requestLocation() -> [Action] {
        let number = subscriptions.requestDelegateLocation(sawConnection: session.isConnected)
        return demandChanged() + [.scheduleRequestTimeout(request: number, after: requestTimeout)]
    }

    mutating func requestTimedOut(_ number: Int) -> [Action] {
        guard subscriptions.delegateRequestTimedOut(number) else { return [] }
        let error = LocationError(
            .locationUnknown, "no fix\(subscriptions.desiredAccuracy.map { " within \($0) m" } ?? "") in \(requestTimeout)",
            bestLocation: epochs.latest?.location)
        return [.fail(error, generation: subscriptions.generation)] + demandChanged()
    }

    // MARK: Other consumers

    /// Subscribes `consumer` under a reserved id; `nil` if the id was given back meanwhile (nothing is held).
    mutating func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, _ consumer: any SubscriptionConsumer
    ) -> [Action]? {
        guard subscriptions.subscribe(id, request, consumer, sawConnection: session.isConnected) else { return nil }
        // A timeline starts with the status now, before whatever subscribing changes.
        var actions = subscriptions.tellStatus(status.current, only: id).actions + demandChanged()
        // A request that takes gpsd's held fix asks for it now if a session is open; one opening asks then.
        if request.maximumAge != nil, let open = session.openSession { actions.append(.requestHeldFix(open)) }
        return actions
    }

    /// Gives an id back: a reservation is dropped, a live subscription ends. Returns what a live subscription
    /// had seen, or `nil` if it had ended already (or never subscribed).
    mutating func unsubscribe(_ id: SubscriptionID) -> (EndedSubscription, [Action])? {
        guard let ended = subscriptions.unsubscribe(id) else { return nil }
        return (ended, demandChanged())
    }

    /// Ends the live subscriptions `ids` for their consumer (``SubscriptionTable/endSubscriptions(_:)``); returns
    /// the ids whose end was decided, now or before.
    mutating func endSubscriptions(_ ids: [SubscriptionID]) -> (actions: [Action], ended: [SubscriptionID]) {
        let (notifications, ended) = subscriptions.endSubscriptions(ids)
        return (notifications.actions + demandChanged(), ended)
    }

    // MARK: Observers

    /// Registers an observer; returns its id, and with `startingWithStatus` tells it the status now, before
    /// anything decided later.
    mutating func addObserver(
        _ observer: @escaping SubscriptionTable.Observer, startingWithStatus: Bool
    ) -> (id: Int, actions: [Action]) {
        let id = subscriptions.addObserver(observer)
        return (id, startingWithStatus ? [.observe(subscriptions.observers(only: id), .status(status.current))] : [])
    }

    mutating func removeObserver(_ id: Int) {
        subscriptions.removeObserver(id)
    }
}
