import FoundationEssentials
import GPSDCore

// The session's inputs: its opening and closing reported back, its timers, and what it reads.
extension LocationManagerStateMachine {
    // MARK: Opening and closing

    mutating func sessionOpened(_ number: Int, _ opened: any SourceSession) -> Decision {
        var decision = Decision()
        switch session.opened(number, opened, wanted: subscriptions.wantsSession) {
        case .open(let open):
            // Requests waiting for gpsd's held fix (subscribed while this opened, or kept across a reconnection).
            if subscriptions.wantsHeldFix { decision.heldFixRequest = open }
        case .close(let closing):
            decision.transition(.close(number: closing.number, closing.session))
        }
        return decision
    }

    /// The session could not even begin (the system refused a thread or a pipe): everything waiting on it fails.
    mutating func sessionFailedToOpen(_ number: Int, _ error: LocationError) -> Decision {
        var decision = Decision()
        switch session.failedToOpen(number) {
        case .ignored: break
        case .stopped:
            end(subscriptions.endAll(with: error, latest: epochs.latest?.location), into: &decision)
            observe(.sessionEnded(error), into: &decision)
            announce(status.stopped(), into: &decision)
        }
        return decision
    }

    mutating func sessionClosed(_ number: Int) -> Decision {
        var decision = Decision()
        switch session.closed(number, wanted: subscriptions.wantsSession) {
        case .ignored: break
        case .reconnect(let timer): decision.timers.append(.reconnect(timer: timer.id, after: timer.after))
        case .open(let next): open(next, into: &decision)
        case .stopped: announce(status.stopped(), into: &decision)
        }
        return decision
    }

    mutating func reconnectTimerFired(_ timer: Int) -> Decision {
        var decision = Decision()
        switch session.reconnectTimerFired(timer, wanted: subscriptions.wantsSession) {
        case .ignored: break
        case .open(let next): open(next, into: &decision)
        case .stopped: announce(status.stopped(), into: &decision)
        }
        return decision
    }

    /// The linger's timer: the session that the last one-shot request left closes, if nothing wants it yet.
    mutating func lingerTimerFired(_ timer: Int) -> Decision {
        var decision = Decision()
        switch session.lingerTimerFired(timer, wanted: subscriptions.wantsSession) {
        case .ignored: break
        case .close(let closing): decision.transition(.close(number: closing.number, closing.session))
        }
        return decision
    }

    /// The watchdog's timer: stale if the session has been silent for the stale timeout.
    mutating func watchdogFired(_ timer: Int, now: Duration) -> Decision {
        var decision = Decision()
        switch session.watchdogFired(timer, now: now) {
        case .ignored: break
        case .stale(let silence): announce(status.stale(for: silence), into: &decision)
        case .rescheduled(let next): watch(next, into: &decision)
        }
        return decision
    }

    /// The heading watchdog's timer: headings are silent if none came for the stale timeout.
    mutating func headingWatchFired(_ timer: Int, now: Duration) -> Decision {
        var decision = Decision()
        switch headingWatch.fired(timer, now: now, timeout: session.staleTimeout) {
        case .ignored: break
        case .silent: decision.notifications.add(subscriptions.tellHeadingSilence(true))
        case .rescheduled(let next): decision.timers.append(.headingWatch(timer: next.id, after: next.after))
        }
        return decision
    }

    // MARK: What the session reads

    /// Events that came together (one read's reports) of session `number`, at monotonic time `now`, as the wall
    /// clock and the monotonic clock have it (`arrival`): one decision for all, so that each consumer gets one
    /// batch. Events of a session that has ended, or is not the current one, are ignored.
    mutating func handle(
        _ events: [SourceEvent], session number: Int, now: Duration, arrival: Location.Arrival
    ) -> Decision {
        var decision = Decision()
        for event in events { handle(event, session: number, now: now, arrival: arrival, into: &decision) }
        return decision
    }

    /// One event of ``handle(_:session:now:arrival:)``. A fix's way allocates nothing of its own: its notices join
    /// the decision's batches.
    mutating func handle(
        _ event: SourceEvent, session number: Int, now: Duration, arrival: Location.Arrival,
        into decision: inout Decision
    ) {
        guard session.isCurrent(session: number) else { return }
        switch event {
        case .connected:
            connections += 1
            subscriptions.sessionConnected()
            announce(status.connected(), into: &decision)
            watch(session.connected(at: now), into: &decision)
        case .report(let report):
            // The backoff starts over once the connection proved good by a fix (or by holding, when it fails);
            // gpsd's greeting proves nothing: a peer that greets and hangs up is retried ever more slowly.
            switch report {
            case .fix: session.provedGood()
            case .poll(_, let fixes) where !fixes.isEmpty: session.provedGood()
            default: break
            }
            watch(session.reported(at: now), into: &decision)
            handle(report, now: now, arrival: arrival, into: &decision)
        case .rejected(let problem):
            if epochs.reject(problem) { decision.problems.append(problem) }
        case .skippedLine:
            // Not a report: a peer that sends only garbage goes stale.
            epochs.skippedLine()
        case .failed(let error): sessionEnded(with: error, failedAt: now, into: &decision)
        case .finished: sessionEnded(with: nil, into: &decision)
        }
    }

    private func watch(_ timer: SessionStateMachine.Timer?, into decision: inout Decision) {
        if let timer { decision.timers.append(.watchdog(timer: timer.id, after: timer.after)) }
    }

    private mutating func handle(
        _ report: GPSDReport, now: Duration, arrival: Location.Arrival, into decision: inout Decision
    ) {
        switch report {
        case .fix(let location):
            receiverReported(device: location.device, time: location.timestamp, isFix: true, into: &decision)
            receive(location, origin: .live, now: now, arrival: arrival, into: &decision)
        case .fixWithoutTime(let device):
            // A receiver's first report of a session, before it knows the date: held back, counted. Its epoch's
            // SKYs come after it, seen from its start.
            epochs.fixWithoutTime()
            receiverReported(device: device, time: nil, isFix: true, into: &decision)
            announce(status.reportArrived(), into: &decision)
        case .poll(let time, let reports):
            for case .fix(let location) in reports {
                receive(location, origin: .held(polledAt: time), now: now, arrival: arrival, into: &decision)
            }
        case .attitude(var heading, let timed):
            // Without a time of its own, a heading is as old as its arrival: gpsd reads a heading sentence as it is
            // measured, and the time it borrows is its epoch's fix's (or a fix's from before the receiver went).
            heading.arrival = Location.Arrival(
                instant: arrival.instant, date: arrival.date,
                delay: timed ? epochs.delay(ofHeadingAt: heading.timestamp, device: heading.device, now: now) : .zero)
            self.heading = heading
            let watch = headingWatch.arrived(at: now, timeout: session.staleTimeout)
            if let timer = watch.timer { decision.timers.append(.headingWatch(timer: timer.id, after: timer.after)) }
            let delivery = subscriptions.deliver(heading)
            decision.notifications.add(delivery.notifications)
            // After the heading, so that a timeline's update of the silence's end carries it.
            if watch.endsSilence { decision.notifications.add(subscriptions.tellHeadingSilence(false)) }
            if delivery.toDelegate { decision.call(.heading(heading), generation: subscriptions.headingGeneration) }
            announce(status.reportArrived(), into: &decision)
        case .sky(let view, let listed): skyReported(view, listed: listed, into: &decision)
        case .version(let release): announce(status.version(release), into: &decision)
        case .devices(let count):
            if count == 0 { receiverWent(nil, into: &decision) }
            announce(status.devices(count: count), into: &decision)
        case .device(let path, let active):
            // A receiver that went away ends the epoch streams hold of it (of every receiver, if gpsd named none).
            if !active {
                receiverWent(path, into: &decision)
                subscriptions.flushHeldEpochs(into: &decision.notifications, device: path)
            }
            announce(status.device(path, active: active), into: &decision)
        case .noFix(let device, let time):
            // That receiver has lost its fix: the epoch streams hold of it is over.
            subscriptions.flushHeldEpochs(into: &decision.notifications, device: device ?? "")
            receiverReported(device: device, time: time, isFix: false, into: &decision)
            announce(status.noFix(), into: &decision)
        case .deviation(let deviation, let device, let time):
            guard let time else { return announce(status.reportArrived(), into: &decision) }
            let (completesEpoch, fix) = epochs.deviation(deviation, device: device, time: time)
            if let fix {
                receive(fix.completed, origin: .completed, now: now, arrival: fix.arrival, into: &decision)
            } else {
                announce(status.reportArrived(), into: &decision)
            }
            // The GST ends its epoch: the streams that take each epoch once pass it on now, not when the next begins.
            if completesEpoch { subscriptions.flushHeldEpochs(into: &decision.notifications, device: device ?? "") }
        case .other: announce(status.reportArrived(), into: &decision)
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            sessionEnded(with: LocationError(.protocolError, "gpsd: \(message)"), into: &decision)
        }
    }

    /// A fix of the current session (from `origin`, as ``EpochAssembly/assemble(_:origin:now:arrival:)`` takes
    /// it), through the epoch assembly to the subscriptions.
    private mutating func receive(
        _ reported: Location, origin: EpochAssembly.Origin, now: Duration, arrival: Location.Arrival,
        into decision: inout Decision
    ) {
        let location: Location
        let completesEpoch: Bool
        switch epochs.assemble(reported, origin: origin, now: now, arrival: arrival) {
        case .older: return
        case .repeated(let completes):
            announce(status.reportArrived(), into: &decision)
            // The report adds nothing, but ends its epoch: what the streams hold of it is passed on now.
            if completes { subscriptions.flushHeldEpochs(into: &decision.notifications, device: reported.device ?? "") }
            return
        case .accepted(let accepted, let forgotten, let completes):
            location = accepted
            completesEpoch = completes
            if !origin.isHeld { health.accepted(accepted, at: now) }
            if let forgotten { decision.notifications.add(subscriptions.forget(receiver: forgotten)) }
        }
        // A fix gpsd held says nothing of whether fixes are coming.
        announce(origin.isHeld ? status.reportArrived() : status.fix(location), into: &decision)
        if !origin.isHeld { _ = stationary.update(with: location) }
        let delivery = subscriptions.deliver(location, held: origin.isHeld, now: now, patience: session.staleTimeout)
        decision.notifications.add(delivery.notifications)
        if delivery.toDelegate { decision.call(.locations([location]), generation: subscriptions.generation) }
        if let rejection = delivery.rejectionToDelegate {
            decision.call(.rejection(rejection), generation: subscriptions.generation)
        }
        // Its report ends the epoch: the streams that take each epoch once pass it on now, not when the next begins.
        if completesEpoch { subscriptions.flushHeldEpochs(into: &decision.notifications, device: location.device ?? "") }
        if delivery.endedAny { demandChanged(into: &decision, lingering: true) }
    }

    // MARK: A session's end

    /// The current session failed (`error`) or finished (`nil`: a recording's end), at `now` if it failed by
    /// itself. After a failure the session part retries, only requests that never saw a connection fail, and
    /// the rest wait for the next session; otherwise everything waiting ends.
    mutating func sessionEnded(
        with error: LocationError?, failedAt now: Duration? = nil, into decision: inout Decision
    ) {
        let next: SessionStateMachine.NextStep
        if error == nil { finishSkyEpochs(into: &decision) }
        epochs.forgetSatellites()
        switch session.ended(by: error, failedAt: now) {
        case .retry(let delay, let attempt, let error):
            subscriptions.flushHeldEpochs(into: &decision.notifications)
            decision.notifications.add(subscriptions.endRejections())
            end(subscriptions.endRequestsThatNeverConnected(with: error), into: &decision)
            observe(.sessionEnded(error), into: &decision)
            if subscriptions.wantsSession {
                next = .reconnect(after: delay)
                announce(status.reconnecting(attempt: attempt, after: delay, because: error), into: &decision)
            } else {
                next = .stop
            }
        case .end:
            end(subscriptions.endAll(with: error, latest: epochs.latest?.location), into: &decision)
            observe(.sessionEnded(error), into: &decision)
            next = .stop
        }
        if let closing = session.close(then: next) {
            decision.transition(.close(number: closing.number, closing.session))
        }
    }
}
