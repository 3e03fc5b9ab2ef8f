import FoundationEssentials
import GPSDCore

// The session's inputs: its opening and closing reported back, its timers, and what it reads.
extension LocationManagerStateMachine {
    // MARK: Opening and closing

    mutating func sessionOpened(_ number: Int, _ opened: any SourceSession) -> [Action] {
        switch session.opened(number, opened, wanted: subscriptions.wantsSession) {
        case .open(let open):
            // Requests waiting for gpsd's held fix (subscribed while this opened, or kept across a reconnection).
            subscriptions.wantsHeldFix ? [.requestHeldFix(open)] : []
        case .close(let closing):
            [.closeSession(number: closing.number, closing.session)]
        }
    }

    /// The session could not even begin (the system refused a thread or a pipe): everything waiting on it fails.
    mutating func sessionFailedToOpen(_ number: Int, _ error: LocationError) -> [Action] {
        switch session.failedToOpen(number) {
        case .ignored: []
        case .stopped:
            actions(of: subscriptions.endAll(with: error, latest: epochs.latest?.location))
                + observe(.sessionEnded(error)) + announce(status.stopped())
        }
    }

    mutating func sessionClosed(_ number: Int) -> [Action] {
        switch session.closed(number, wanted: subscriptions.wantsSession) {
        case .ignored: []
        case .reconnect(let timer): [.scheduleReconnect(timer: timer.id, after: timer.after)]
        case .open(let next): open(next)
        case .stopped: announce(status.stopped())
        }
    }

    mutating func reconnectTimerFired(_ timer: Int) -> [Action] {
        switch session.reconnectTimerFired(timer, wanted: subscriptions.wantsSession) {
        case .ignored: []
        case .open(let next): open(next)
        case .stopped: announce(status.stopped())
        }
    }

    /// The watchdog's timer: stale if the session has been silent for the stale timeout.
    mutating func watchdogFired(_ timer: Int, now: Duration) -> [Action] {
        switch session.watchdogFired(timer, now: now) {
        case .ignored: []
        case .stale(let silence): announce(status.stale(for: silence))
        case .rescheduled(let next): watch(next)
        }
    }

    // MARK: What the session reads

    /// An event of session `number`, at monotonic time `now`, as the wall clock and the monotonic clock have it
    /// (`arrival`), its actions appended to `batch`; events of a session that has ended, or is not the current one,
    /// are ignored. A fix's way allocates nothing of its own: its actions and notices join the batch.
    mutating func handle(
        _ event: SourceEvent, session number: Int, now: Duration, arrival: Location.Arrival,
        into batch: inout ActionBatch
    ) {
        guard session.isCurrent(session: number) else { return }
        switch event {
        case .connected:
            subscriptions.sessionConnected()
            batch.append(contentsOf: announce(status.connected()) + watch(session.connected(at: now)))
        case .report(let report):
            // The backoff starts over once the connection proved good by a fix (or by holding, when it fails);
            // gpsd's greeting proves nothing: a peer that greets and hangs up is retried ever more slowly.
            switch report {
            case .fix: session.provedGood()
            case .poll(_, let fixes) where !fixes.isEmpty: session.provedGood()
            default: break
            }
            if let timer = session.reported(at: now) { batch.append(.scheduleWatchdog(timer: timer.id, after: timer.after)) }
            if case .fix(let location) = report {
                receive(location, origin: .live, now: now, arrival: arrival, into: &batch)
            } else {
                batch.append(contentsOf: handle(report, now: now, arrival: arrival))
            }
        case .rejected(let problem):
            if epochs.reject(problem) { batch.append(.log(problem)) }
        case .skippedLine:
            // Not a report: a peer that sends only garbage goes stale.
            epochs.skippedLine()
        case .failed(let error): batch.append(contentsOf: sessionEnded(with: error, failedAt: now))
        case .finished: batch.append(contentsOf: sessionEnded(with: nil))
        }
    }

    private func watch(_ timer: SessionStateMachine.Timer?) -> [Action] {
        timer.map { [.scheduleWatchdog(timer: $0.id, after: $0.after)] } ?? []
    }

    private mutating func handle(_ report: GPSDReport, now: Duration, arrival: Location.Arrival) -> [Action] {
        switch report {
        case .fix(let location):
            return receive(location, origin: .live, now: now, arrival: arrival)
        case .fixWithoutTime:
            // A receiver's first report of a session, before it knows the date: held back, counted.
            epochs.fixWithoutTime()
            return announce(status.reportArrived())
        case .poll(let time, let reports):
            return reports.flatMap { report -> [Action] in
                guard case .fix(let location) = report else { return [] }
                return receive(location, origin: .held(polledAt: time), now: now, arrival: arrival)
            }
        case .attitude(let heading):
            self.heading = heading
            let delivery = subscriptions.deliver(heading)
            return delivery.notifications.actions
                + (delivery.toDelegate ? [.deliverHeading(heading, generation: subscriptions.headingGeneration)] : [])
                + announce(status.reportArrived())
        case .sky(let view, let listed):
            let view = epochs.sky(view, listed: listed)
            return observe(.satellites(view))
                + (subscriptions.delegateSubscribed ? [.reportSatellites(view, generation: subscriptions.generation)] : [])
                + announce(status.sky(view.count))
        case .version(let release): return announce(status.version(release))
        case .devices(let count):
            if count == 0 { epochs.forgetSatellites() }
            return announce(status.devices(count: count))
        case .device(let path, let active):
            // A receiver that went away ends the epoch streams hold of it (of every receiver, if gpsd named none).
            if !active { epochs.forgetSatellites() }
            let flushed = active ? [] : subscriptions.flushHeldEpochs(of: path).actions
            return flushed + announce(status.device(path, active: active))
        case .noFix(let device, _):
            // That receiver has lost its fix: the epoch streams hold of it is over.
            return subscriptions.flushHeldEpochs(of: device ?? "").actions + announce(status.noFix())
        case .deviation(let deviation, let device, let time):
            guard let time else { return announce(status.reportArrived()) }
            let (completesEpoch, fix) = epochs.deviation(deviation, device: device, time: time)
            var actions = fix.map { receive($0.completed, origin: .completed, now: now, arrival: $0.arrival) }
                ?? announce(status.reportArrived())
            // The GST ends its epoch: the streams that take each epoch once pass it on now, not when the next begins.
            if completesEpoch { actions += subscriptions.flushHeldEpochs(of: device ?? "").actions }
            return actions
        case .other: return announce(status.reportArrived())
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            return sessionEnded(with: LocationError(.protocolError, "gpsd: \(message)"))
        }
    }

    /// A fix of the current session (from `origin`, as ``EpochAssembly/assemble(_:origin:now:arrival:)`` takes
    /// it), through the epoch assembly to the subscriptions.
    private mutating func receive(
        _ reported: Location, origin: EpochAssembly.Origin, now: Duration, arrival: Location.Arrival
    ) -> [Action] {
        var batch = ActionBatch()
        receive(reported, origin: origin, now: now, arrival: arrival, into: &batch)
        return batch.actions
    }

    /// ``receive(_:origin:now:arrival:)``, its actions appended to `batch`.
    private mutating func receive(
        _ reported: Location, origin: EpochAssembly.Origin, now: Duration, arrival: Location.Arrival,
        into batch: inout ActionBatch
    ) {
        let location: Location
        let completesEpoch: Bool
        switch epochs.assemble(reported, origin: origin, now: now, arrival: arrival) {
        case .older: return
        case .repeated(let completes):
            batch.append(contentsOf: announce(status.reportArrived()))
            // The report adds nothing, but ends its epoch: what the streams hold of it is passed on now.
            if completes { batch.append(subscriptions.flushHeldEpochs(of: reported.device ?? "")) }
            return
        case .accepted(let accepted, let forgotten, let completes):
            location = accepted
            completesEpoch = completes
            if let forgotten { batch.append(subscriptions.forget(receiver: forgotten)) }
        }
        // A fix gpsd held says nothing of whether fixes are coming.
        if let new = origin.isHeld ? status.reportArrived() : status.fix(location) {
            batch.append(contentsOf: announce(new))
        }
        let delivery = subscriptions.deliver(location, held: origin.isHeld, now: now, patience: session.staleTimeout)
        batch.append(delivery.notifications)
        if delivery.toDelegate { batch.append(.deliver([location], generation: subscriptions.generation)) }
        if let rejection = delivery.rejectionToDelegate {
            batch.append(.reportRejection(rejection, generation: subscriptions.generation))
        }
        // Its report ends the epoch: the streams that take each epoch once pass it on now, not when the next begins.
        if completesEpoch { batch.append(subscriptions.flushHeldEpochs(of: location.device ?? "")) }
        if delivery.endedAny { batch.append(contentsOf: demandChanged()) }
    }

    // MARK: A session's end

    /// The current session failed (`error`) or finished (`nil`: a recording's end), at `now` if it failed by
    /// itself. After a failure the session part retries, only requests that never saw a connection fail, and
    /// the rest wait for the next session; otherwise everything waiting ends.
    mutating func sessionEnded(with error: LocationError?, failedAt now: Duration? = nil) -> [Action] {
        var actions: [Action]
        let next: SessionStateMachine.NextStep
        epochs.forgetSatellites()
        switch session.ended(by: error, failedAt: now) {
        case .retry(let delay, let attempt, let error):
            actions = subscriptions.flushHeldEpochs().actions + subscriptions.endRejections().actions
                + self.actions(of: subscriptions.endRequestsThatNeverConnected(with: error))
                + observe(.sessionEnded(error))
            if subscriptions.wantsSession {
                next = .reconnect(after: delay)
                actions += announce(status.reconnecting(attempt: attempt, after: delay, because: error))
            } else {
                next = .stop
            }
        case .end:
            actions = self.actions(of: subscriptions.endAll(with: error, latest: epochs.latest?.location))
                + observe(.sessionEnded(error))
            next = .stop
        }
        if let closing = session.close(then: next) {
            actions.append(.closeSession(number: closing.number, closing.session))
        }
        return actions
    }
}
