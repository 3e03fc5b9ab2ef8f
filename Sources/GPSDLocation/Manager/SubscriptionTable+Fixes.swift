import FoundationEssentials
import GPSDCore

extension SubscriptionTable {
    /// What a fix means for the subscriptions.
    struct FixDelivery {
        var notifications = Notifications()
        /// Whether the delegate is called with the fix.
        var toDelegate = false
        /// Whether a one-shot subscription ended with it: the demand for a session may have changed.
        var endedAny = false
        /// What the delegate is told of its filter rejecting every fix for the patience, if it is now.
        var rejectionToDelegate: FixRejection?
    }

    /// A fix, as the epoch assembly passed it on: one the receiver just reported, or one gpsd `held` (from a POLL
    /// reply), whose age is its arrival's delay, if known. Each subscription whose filters it passes takes it: a
    /// one-shot then ends; a stream taking complete epochs holds it until its epoch is over. A continuous
    /// subscription whose desired accuracy rejected every live fix for `patience` (at monotonic time `now`) is
    /// told so, once (``FixRejection``).
    mutating func deliver(
        _ location: Location, held: Bool, now: Duration = .zero, patience: Duration = .never
    ) -> FixDelivery {
        var delivery = FixDelivery()
        var ended: [SubscriptionID] = []
        for index in subscriptions.entries.indices {
            if subscriptions.entries[index].takesHeadings { continue }
            if held {
                guard subscriptions.entries[index].takesHeldFix(aged: location.arrival?.delay) else {
                    if subscriptions.entries[index].wantsHeldFix { subscriptions.entries[index].refusedHeldFix = location }
                    continue
                }
            } else if !subscriptions.entries[index].isOneShot {
                noteAccuracy(of: location, at: index, now: now, patience: patience, into: &delivery)
            }
            if subscriptions.entries[index].takesCompleteEpochs {
                hold(location, at: index, into: &delivery.notifications)
                continue
            }
            // Read where it is kept, never copied whole: a subscription holds fixes and epochs, for every fix.
            let id = subscriptions.ids[index]
            let (accuracy, distance) = filters(at: index)
            if subscriptions.entries[index].isOneShot {
                guard location.meets(desiredAccuracy: accuracy) else {
                    if location.isBetter(than: subscriptions.entries[index].best) { subscriptions.entries[index].best = location }
                    continue
                }
                ended.append(id)
                switch subscriptions.entries[index].consumer {
                case .delegate: delivery.toDelegate = true
                case .consumer(let consumer, _):
                    delivery.notifications.add(.location(location), for: id, to: consumer)
                }
            } else if case .delegate = subscriptions.entries[index].consumer {
                guard location.meets(desiredAccuracy: accuracy),
                      location.passes(distanceFilter: distance, since: subscriptions.entries[index].lastDelivered) else { continue }
                delivery.toDelegate = true
            } else {
                passOn(location, at: index, into: &delivery.notifications)
            }
        }
        for id in ended { subscriptions[id] = nil }
        // One callback serves the request and the updates alike, and is what the distance filter measures from.
        if delivery.toDelegate, let index = subscriptions.index(forKey: .delegateUpdates) {
            subscriptions.entries[index].lastDelivered = location
        }
        delivery.endedAny = !ended.isEmpty
        return delivery
    }

    /// The epochs streams hold back are over (the fix was lost, the receiver went away, the connection ended,
    /// the source ended): each is passed on, ahead of what ended it. Only `device`'s, if given.
    mutating func flushHeldEpochs(of device: String? = nil) -> Notifications {
        var notifications = Notifications()
        flushHeldEpochs(into: &notifications, device: device)
        return notifications
    }

    mutating func flushHeldEpochs(into notifications: inout Notifications, device: String? = nil) {
        for index in subscriptions.entries.indices {
            // One receiver's is looked up (once, and changed in place): sorting every receiver's for it made each
            // fix lost cost them all.
            if let device {
                if let pending = subscriptions.entries[index].heldEpochs.pass(device) {
                    passOn(pending, at: index, into: &notifications)
                }
                continue
            }
            for key in subscriptions.entries[index].heldEpochs.devices.sorted() {
                guard let pending = subscriptions.entries[index].heldEpochs.pass(key) else { continue }
                passOn(pending, at: index, into: &notifications)
            }
        }
    }

    /// A receiver the epoch assembly forgot, to bound what is kept: its held epochs are passed on and dropped.
    mutating func forget(receiver device: String) -> Notifications {
        let notifications = flushHeldEpochs(of: device)
        for index in subscriptions.entries.indices { subscriptions.entries[index].heldEpochs.forget(device) }
        return notifications
    }

    /// Holds `location` for the subscription at `index`, which takes complete epochs: the newest record of its
    /// receiver's epoch waits; that receiver's previous epoch, now over, is passed on. A record of an epoch already
    /// passed on (a GST after a flush) is not held again.
    private mutating func hold(
        _ location: Location, at index: Int,
        into notifications: inout Notifications
    ) {
        // Looked up once, and changed in place.
        if let over = subscriptions.entries[index].heldEpochs.hold(location, of: location.device ?? "") {
            passOn(over, at: index, into: &notifications)
        }
    }

    /// Passes `location` to the continuous consumer subscription at `index` if it meets its filters.
    mutating func passOn(
        _ location: Location, at index: Int,
        into notifications: inout Notifications
    ) {
        guard case .consumer(let consumer, _) = subscriptions.entries[index].consumer else { return }
        let (accuracy, distance) = filters(at: index)
        guard location.meets(desiredAccuracy: accuracy),
              location.passes(distanceFilter: distance, since: subscriptions.entries[index].lastDelivered) else { return }
        subscriptions.entries[index].lastDelivered = location
        notifications.add(.location(location), for: subscriptions.ids[index], to: consumer)
    }

    /// Keeps count of how long the continuous subscription at `index` has rejected every fix for its accuracy, and
    /// tells it once when that has lasted `patience`.
    private mutating func noteAccuracy(
        of location: Location, at index: Int, now: Duration,
        patience: Duration, into delivery: inout FixDelivery
    ) {
        guard let accuracy = filters(at: index).accuracy else { return }
        // A fix that meets the accuracy ends a rejection; so does a gap in the fixes as long as the patience (they
        // stopped meanwhile: the rejection starts afresh with the next).
        if location.meets(desiredAccuracy: accuracy)
            || subscriptions.entries[index].rejecting.map({ now - $0.last > patience }) == true {
            endRejection(at: index, into: &delivery.notifications)
            if location.meets(desiredAccuracy: accuracy) { return }
        }
        guard var rejecting = subscriptions.entries[index].rejecting else {
            subscriptions.entries[index].rejecting = (now, now, location, false)
            return
        }
        rejecting.last = now
        if location.isBetter(than: rejecting.best) { rejecting.best = location }
        let rejection = FixRejection(desiredAccuracy: accuracy, best: rejecting.best, duration: now - rejecting.since)
        if !rejecting.told, rejection.duration >= patience {
            rejecting.told = true
            switch subscriptions.entries[index].consumer {
            case .delegate: delivery.rejectionToDelegate = rejection
            case .consumer(let consumer, _):
                delivery.notifications.add(
                    .rejected(rejection), for: subscriptions.ids[index], to: consumer)
            }
        }
        subscriptions.entries[index].rejecting = rejecting
    }

    /// Ends the rejection of the subscription at `index`, if any; a consumer told of it is told it is over.
    private mutating func endRejection(
        at index: Int, into notifications: inout Notifications
    ) {
        guard let rejecting = subscriptions.entries[index].rejecting else { return }
        subscriptions.entries[index].rejecting = nil
        if rejecting.told, case .consumer(let consumer, _) = subscriptions.entries[index].consumer {
            notifications.add(.rejectionEnded, for: subscriptions.ids[index], to: consumer)
        }
    }

    /// The fixes stopped (the session ended): every rejection is over.
    mutating func endRejections() -> Notifications {
        var notifications = Notifications()
        for index in subscriptions.entries.indices { endRejection(at: index, into: &notifications) }
        return notifications
    }

    private func filters(
        at index: Int
    ) -> (accuracy: Double?, distance: Double?) {
        switch subscriptions.entries[index].consumer {
        case .delegate: (desiredAccuracy, distanceFilter)
        case .consumer(_, let request): (request.desiredAccuracy, request.distanceFilter)
        }
    }
}

/// Events for consumers, gathered while an input is decided: one batch per consumer, each in the order decided.
struct Notifications {
    /// The first consumer's batch kept inline, so that deciding notices for one consumer (a fix for one stream, as
    /// nearly always) allocates only its batch; the others' after it, looked up one by one (cheaper than hashing
    /// for the few consumers a manager has).
    private var first: Batch?
    private var rest: [Batch] = []

    struct Batch {
        var consumer: any SubscriptionConsumer
        var notices: [SubscriptionNotice]
    }

    var isEmpty: Bool { first == nil }

    /// Adds `event` for subscription `id` of `consumer`, at the end of its batch.
    mutating func add(_ event: SubscriptionEvent, for id: SubscriptionID, to consumer: any SubscriptionConsumer) {
        let notice = SubscriptionNotice(id: id, event: event)
        withBatch(of: consumer, new: [notice]) { $0.append(notice) }
    }

    /// Adds `notices` at the end of `consumer`'s batch.
    mutating func add(_ notices: [SubscriptionNotice], to consumer: any SubscriptionConsumer) {
        withBatch(of: consumer, new: notices) { $0 += notices }
    }

    /// Changes `consumer`'s batch by `change`, or starts it with `new` if it has none.
    private mutating func withBatch(
        of consumer: any SubscriptionConsumer, new: @autoclosure () -> [SubscriptionNotice],
        _ change: (inout [SubscriptionNotice]) -> Void
    ) {
        guard first != nil else {
            first = Batch(consumer: consumer, notices: new())
            return
        }
        if first!.consumer === consumer {
            change(&first!.notices)
            return
        }
        for index in rest.indices where rest[index].consumer === consumer {
            change(&rest[index].notices)
            return
        }
        rest.append(Batch(consumer: consumer, notices: new()))
    }

    /// Adds `other`'s notices, each at the end of its consumer's batch.
    mutating func add(_ other: Notifications) {
        other.forEach { add($0.notices, to: $0.consumer) }
    }

    /// Each consumer's batch, in the order the consumers were first notified.
    func forEach(_ body: (Batch) -> Void) {
        guard let first else { return }
        body(first)
        for batch in rest { body(batch) }
    }

    /// The batches, as an array: for tests.
    var batches: [Batch] {
        var batches: [Batch] = []
        forEach { batches.append($0) }
        return batches
    }

    /// Keeps the batches `isKept` says to keep, in order.
    mutating func keep(where isKept: (Batch) -> Bool) {
        var kept = Notifications()
        forEach { if isKept($0) { kept.add($0.notices, to: $0.consumer) } }
        self = kept
    }
}
