import Foundation

extension LocationManagerStateMachine {
    /// An event of session `number`; events of a session that has ended, or is not the current one, are ignored.
    mutating func handle(_ event: SourceEvent, session number: Int, now: Duration) -> [Action] {
        guard isCurrent(session: number) else { return [] }
        switch event {
        case .report(let report): return handle(report, now: now)
        case .skippedLine:
            skippedLine()
            return []
        case .failed(let error): return endSession(with: error)
        case .finished: return endSession(with: nil)
        }
    }

    private mutating func handle(_ report: GPSDReport, now: Duration) -> [Action] {
        switch report {
        case .fix(let location):
            return receive(location, age: nil, now: now)
        case .poll(let time, let reports):
            return reports.flatMap { report -> [Action] in
                guard case .fix(let location) = report else { return [] }
                return receive(location, age: Self.age(of: location, polledAt: time), now: now)
            }
        case .sky(let count):
            return receive(count)
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            return endSession(with: LocationError(.protocolError, "gpsd: \(message)"))
        case .noFix, .version, .devices, .other:
            return []
        }
    }

    /// The session ended by itself: everything waiting on it ends, observers hear of it, and it is closed.
    private mutating func endSession(with error: LocationError?) -> [Action] {
        end(with: error) + observe(.sessionEnded(error)) + sessionEnded()
    }

    /// How old a fix from a POLL reply was, by gpsd's clock: the poll's time minus the fix's. Only when the
    /// two are plausibly on the same clock (0 to 1 day apart); a replayed log's fix times can be years off,
    /// and then gpsd holding the fix is the best freshness we know.
    static func age(of location: Location, polledAt time: Date?) -> Duration {
        guard let time, let fixTime = location.timestamp else { return .zero }
        let seconds = time.timeIntervalSince(fixTime)
        return (0...86_400).contains(seconds) ? .seconds(seconds) : .zero
    }

    // MARK: Deliveries

    /// Every subscription ends, each told once: with `error`, or at the end of a recording (`nil`), when a
    /// one-shot fails with `locationUnknown` and a continuous subscription ends quietly.
    mutating func end(with error: LocationError?) -> [Action] {
        var notifications = Notifications()
        var delegateFailure: LocationError?
        for (id, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            switch subscription.consumer {
            case .delegate:
                if let error {
                    delegateFailure = error
                } else if subscription.isOneShot {
                    delegateFailure = LocationError(
                        .locationUnknown, "the recording ended before a fix", bestLocation: latest?.location)
                }
            case .consumer(let consumer, _):
                let reason = error ?? (subscription.isOneShot ? LocationError(
                    .locationUnknown, "the source ended before a fix", bestLocation: subscription.best) : nil)
                notifications.add(.ended(reason), for: id, to: consumer)
            }
        }
        subscriptions.removeAll()
        var actions = notifications.actions
        if let delegateFailure { actions.append(.fail(delegateFailure, generation: generation)) }
        return actions
    }

    /// A fix of the current session: `age` is nil for one the receiver just reported, and gpsd's estimate of
    /// its age for one from a POLL reply (its held fix).
    mutating func receive(_ location: Location, age: Duration?, now: Duration) -> [Action] {
        let arrival = now - (age ?? .zero)
        if let latest, latest.at > arrival { return [] }   // an older held fix than one we have
        guard coalescer.accept(location) else { return [] }
        latest = (location, arrival)

        var notifications = Notifications()
        var toDelegate = false
        var ended: [SubscriptionID] = []
        var index = subscriptions.startIndex
        while index != subscriptions.endIndex {
            defer { subscriptions.formIndex(after: &index) }
            let (id, subscription) = subscriptions[index]
            if let age, !subscription.takesHeldFix(aged: age) { continue }
            let (accuracy, distance) = filters(of: subscription)
            guard location.meets(desiredAccuracy: accuracy) else {
                if subscription.isOneShot, location.isBetter(than: subscription.best) {
                    subscriptions.values[index].best = location
                }
                continue
            }
            if subscription.isOneShot {
                ended.append(id)
            } else {
                guard location.passes(distanceFilter: distance, since: subscription.lastDelivered) else { continue }
                subscriptions.values[index].lastDelivered = location
            }
            switch subscription.consumer {
            case .delegate: toDelegate = true
            case .consumer(let consumer, _): notifications.add(.location(location), for: id, to: consumer)
            }
        }
        for id in ended { subscriptions[id] = nil }
        var actions = notifications.actions
        if toDelegate {
            // One callback serves the request and the updates alike, and is what the distance filter measures from.
            subscriptions[.delegateUpdates]?.lastDelivered = location
            actions.append(.deliver([location], generation: generation))
        }
        return ended.isEmpty ? actions : actions + reconcile()
    }

    private func filters(of subscription: Subscription) -> (accuracy: Double?, distance: Double?) {
        switch subscription.consumer {
        case .delegate: (desiredAccuracy, distanceFilter)
        case .consumer(_, let request): (request.desiredAccuracy, request.distanceFilter)
        }
    }
}
