import FoundationEssentials
import GPSDCore

extension LocationManagerStateMachine {
    /// An event of session `number`, at monotonic time `now`, as the wall clock and the monotonic clock have it
    /// (`arrival`); events of a session that has ended, or is not the current one, are ignored.
    mutating func handle(
        _ event: SourceEvent, session number: Int, now: Duration, arrival: Location.Arrival
    ) -> [Action] {
        guard isCurrent(session: number) else { return [] }
        switch event {
        case .connected: return sessionConnected(now: now)
        case .report(let report):
            proveConnection(by: report)
            return heard(now: now) + handle(report, now: now, arrival: arrival)
        case .rejected(let problem): return reject(problem)
        case .skippedLine:
            // Not a report: a peer that sends only garbage goes stale.
            statistics.skippedLines += 1
            return []
        case .failed(let error):
            // A connection that held for a while was good, whatever it brought (a gpsd waiting for a receiver).
            if let since = connectedSince, now - since >= Self.connectionProvenAfter { failedAttempts = 0 }
            return sessionEnded(with: error)
        case .finished: return sessionEnded(with: nil)
        }
    }

    private mutating func handle(_ report: GPSDReport, now: Duration, arrival: Location.Arrival) -> [Action] {
        switch report {
        case .fix(let location):
            return receive(location, age: nil, now: now, arrival: arrival)
        case .poll(let time, let reports):
            return reports.flatMap { report -> [Action] in
                guard case .fix(let location) = report else { return [] }
                return receive(location, age: Self.age(of: location, polledAt: time), now: now, arrival: arrival)
            }
        case .sky(let count):
            satellites = count
            return observe(.satellites(count)) + tell(status.sky(count))
        case .version(let release): return tell(status.version(release))
        case .devices(let count): return tell(status.devices(count: count))
        case .device(let path, let active):
            // A receiver that went away ends the epoch streams hold of it (of every receiver, if gpsd named none).
            let flushed = active ? [] : flushPendingEpochs(of: path)
            return flushed + tell(status.device(path, active: active))
        case .noFix(let device, _):
            // That receiver has lost its fix: the epoch streams hold of it is over.
            return flushPendingEpochs(of: device ?? "") + tell(status.noFix())
        case .deviation(let deviation, let device, let time):
            guard let time else { return tell(status.heard()) }
            if deviations[device ?? ""] == nil, deviations.count >= Self.maximumReceivers {
                deviations.remove(at: deviations.startIndex)   // one receiver's, to bound them
            }
            deviations[device ?? ""] = (deviation, time)
            // A GST that comes after its epoch's TPV completes that receiver's live fix: it is passed on again,
            // completed, as a later TPV of the epoch would be, with the time it first arrived.
            guard var completed = newestLiveFix[device ?? ""], completed.deviation == nil, completed.timestamp == time,
                  let firstArrival = completed.arrival else { return tell(status.heard()) }
            completed.deviation = deviation
            completed.arrival = nil
            return receive(completed, age: nil, now: now, arrival: firstArrival)
        case .other: return tell(status.heard())
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            return sessionEnded(with: LocationError(.protocolError, "gpsd: \(message)"))
        }
    }

    /// The backoff starts over once the connection has proved good: it brought a fix, or it held for
    /// ``connectionProvenAfter`` (checked when it fails). gpsd's greeting proves nothing: a peer that greets and
    /// hangs up is retried ever more slowly, and ``ReconnectPolicy/maximumRetries`` ends it.
    private mutating func proveConnection(by report: GPSDReport) {
        switch report {
        case .fix: failedAttempts = 0
        case .poll(_, let fixes) where !fixes.isEmpty: failedAttempts = 0
        default: break
        }
    }

    /// A value that cannot be true: counted, and logged the first time of its kind.
    private mutating func reject(_ problem: ReportProblem) -> [Action] {
        if problem.dropsFix { statistics.rejectedFixes += 1 } else { statistics.rejectedValues += 1 }
        return loggedProblems.insert(problem.kind).inserted ? [.log(problem)] : []
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
        flushPendingEpochs(into: &notifications)
        var delegateFailure: LocationError?
        for (id, var subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
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
                notifications.add(.ended(reason), for: id, of: &subscription, to: consumer)
            }
        }
        subscriptions.removeAll()
        var actions = notifications.actions
        if let delegateFailure { actions.append(.fail(delegateFailure, generation: generation)) }
        return actions
    }

    /// A fix of the current session: `age` is nil for one the receiver just reported, and gpsd's estimate of
    /// its age for one from a POLL reply (its held fix). A fix without a time (a receiver's first report of a
    /// session, before it knows the date) is held back: a later report of the same cycle brings the time.
    mutating func receive(
        _ reported: Location, age: Duration?, now: Duration, arrival: Location.Arrival
    ) -> [Action] {
        guard reported.timestamp != nil else {
            statistics.fixesWithoutTime += 1
            return tell(status.heard())
        }
        let current = now - (age ?? .zero)
        if let latest, latest.at > current { return [] }   // an older held fix than one we have
        let forgotten = coalescer.knows(reported.device) ? [] : makeRoomForAReceiver()   // before it is counted
        var reported = reported
        if reported.deviation == nil, let known = deviations[reported.device ?? ""], known.time == reported.timestamp {
            reported.deviation = known.deviation   // the epoch's GST came first
        }
        guard coalescer.accept(reported) else { return tell(status.heard()) }
        var location = reported
        let heldFor = age ?? .zero
        location.arrival = Location.Arrival(
            instant: arrival.instant.advanced(by: .zero - heldFor), date: arrival.date.addingTimeInterval(-heldFor.timeInterval))
        latest = (location, current)
        if age == nil { newestLiveFix[location.device ?? ""] = location }
        let statusActions = tell(status.fix(location))

        var notifications = Notifications()
        var toDelegate = false
        var ended: [SubscriptionID] = []
        var index = subscriptions.startIndex
        while index != subscriptions.endIndex {
            defer { subscriptions.formIndex(after: &index) }
            if let age, !subscriptions.values[index].takesHeldFix(aged: age) { continue }
            if subscriptions.values[index].takesCompleteEpochs {
                hold(location, at: index, into: &notifications)
                continue
            }
            // A copy only here: one held while the epochs are written would copy them all, for every fix.
            let (id, subscription) = subscriptions[index]
            let (accuracy, _) = filters(of: subscription)
            if subscription.isOneShot {
                guard location.meets(desiredAccuracy: accuracy) else {
                    if location.isBetter(than: subscription.best) { subscriptions.values[index].best = location }
                    continue
                }
                ended.append(id)
                switch subscription.consumer {
                case .delegate: toDelegate = true
                case .consumer(let consumer, _):
                    notifications.add(.location(location), for: id, of: &subscriptions.values[index], to: consumer)
                }
            } else if case .delegate = subscription.consumer {
                let (accuracy, distance) = filters(of: subscription)
                guard location.meets(desiredAccuracy: accuracy),
                      location.passes(distanceFilter: distance, since: subscription.lastDelivered) else { continue }
                toDelegate = true
            } else {
                offer(location, at: index, into: &notifications)
            }
        }
        for id in ended { subscriptions[id] = nil }
        var actions = forgotten + statusActions + notifications.actions
        if toDelegate {
            // One callback serves the request and the updates alike, and is what the distance filter measures from.
            subscriptions[.delegateUpdates]?.lastDelivered = location
            actions.append(.deliver([location], generation: generation))
        }
        return ended.isEmpty ? actions : actions + reconcile()
    }

    /// Receivers kept apart at most (gpsd serves four unless built for more): a peer that names a new one in every
    /// report would otherwise grow what is kept of each without end, and the work of each fix with it.
    static let maximumReceivers = 64

    /// Before a fix of a receiver not seen yet: when as many as ``maximumReceivers`` are kept, the one first seen
    /// is forgotten, its held epoch passed on first, so no fix is lost. Only past that many receivers can an
    /// epoch be passed on twice: that of a forgotten receiver that reports it again.
    private mutating func makeRoomForAReceiver() -> [Action] {
        guard coalescer.receiverCount >= Self.maximumReceivers, let oldest = coalescer.oldestReceiver else { return [] }
        let actions = flushPendingEpochs(of: oldest)
        for index in subscriptions.values.indices { subscriptions.values[index].heldEpochs[oldest] = nil }
        coalescer.forget(oldest)
        newestLiveFix[oldest] = nil
        deviations[oldest] = nil
        return actions
    }

    /// Holds `location` for the subscription at `index`, which takes complete epochs: the newest record of its
    /// receiver's epoch waits; that receiver's previous epoch, now over, is passed on. A record of an epoch already
    /// passed on (a GST after a flush) is not held again.
    private mutating func hold(
        _ location: Location, at index: Dictionary<SubscriptionID, Subscription>.Index,
        into notifications: inout Notifications
    ) {
        let key = location.device ?? ""
        var held = subscriptions.values[index].heldEpochs[key] ?? HeldEpoch()
        if location.timestamp == held.passed { return }
        if let previous = held.pending, previous.timestamp != location.timestamp {
            held.passed = previous.timestamp
            subscriptions.values[index].heldEpochs[key] = held
            offer(previous, at: index, into: &notifications)
        }
        held.pending = location
        subscriptions.values[index].heldEpochs[key] = held
    }

    /// Passes `location` to the continuous consumer subscription at `index` if it meets its filters.
    mutating func offer(
        _ location: Location, at index: Dictionary<SubscriptionID, Subscription>.Index,
        into notifications: inout Notifications
    ) {
        let (id, subscription) = subscriptions[index]
        guard case .consumer(let consumer, _) = subscription.consumer else { return }
        let (accuracy, distance) = filters(of: subscription)
        guard location.meets(desiredAccuracy: accuracy),
              location.passes(distanceFilter: distance, since: subscription.lastDelivered) else { return }
        subscriptions.values[index].lastDelivered = location
        notifications.add(.location(location), for: id, of: &subscriptions.values[index], to: consumer)
    }

    /// The epochs streams hold back are over (the fix was lost, the receiver went away or was forgotten, the
    /// connection ended, the source ended): each is passed on, ahead of what ended it. Only `device`'s, if given.
    mutating func flushPendingEpochs(into notifications: inout Notifications, device: String? = nil) {
        var index = subscriptions.startIndex
        while index != subscriptions.endIndex {
            defer { subscriptions.formIndex(after: &index) }
            // One receiver's is looked up: sorting every receiver's for it made each fix lost cost them all.
            for key in device.map({ [$0] }) ?? subscriptions.values[index].heldEpochs.keys.sorted() {
                guard let pending = subscriptions.values[index].heldEpochs[key]?.pending else { continue }
                subscriptions.values[index].heldEpochs[key] = HeldEpoch(pending: nil, passed: pending.timestamp)
                offer(pending, at: index, into: &notifications)
            }
        }
    }

    mutating func flushPendingEpochs(of device: String? = nil) -> [Action] {
        var notifications = Notifications()
        flushPendingEpochs(into: &notifications, device: device)
        return notifications.actions
    }

    private func filters(of subscription: Subscription) -> (accuracy: Double?, distance: Double?) {
        switch subscription.consumer {
        case .delegate: (desiredAccuracy, distanceFilter)
        case .consumer(_, let request): (request.desiredAccuracy, request.distanceFilter)
        }
    }
}
