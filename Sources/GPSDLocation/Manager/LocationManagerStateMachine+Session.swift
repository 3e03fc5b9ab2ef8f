import GPSDCore

extension LocationManagerStateMachine {
    /// Opens a session when something wants one, closes it when nothing does: every change of demand ends here.
    mutating func reconcile() -> [Action] {
        switch source {
        case .idle where isSessionWanted:
            coalescer.reset()   // a fresh start; a reconnection keeps it, so a fix sent again is not delivered twice
            deviations.removeAll()
            newestLiveFix.removeAll()
            return openNextSession()
        case .open(let number, let session) where !isSessionWanted:
            source = .closing(number: number, then: .stop)
            watchdog.timer = nil
            return [.closeSession(number: number, session)]
        case .waitingToReconnect where !isSessionWanted:
            return stop()
        default:
            return []
        }
    }

    private mutating func openNextSession() -> [Action] {
        sessionCount += 1
        connectedSince = nil
        source = .opening(number: sessionCount, ended: nil)
        return tell(status.connecting(attempt: failedAttempts + 1)) + [.openSession(number: sessionCount)]
    }

    /// No session, and none to come.
    private mutating func stop() -> [Action] {
        source = .idle
        failedAttempts = 0
        watchdog.timer = nil
        return tell(status.stopped())
    }

    mutating func sessionOpened(_ number: Int, _ session: any SourceSession) -> [Action] {
        guard case .opening(number, let ended) = source else { return [.closeSession(number: number, session)] }
        if let ended {
            source = .closing(number: number, then: ended)
            return [.closeSession(number: number, session)]
        }
        guard isSessionWanted else {
            source = .closing(number: number, then: .stop)
            return [.closeSession(number: number, session)]
        }
        source = .open(number: number, session: session)
        // Requests waiting for gpsd's held fix (subscribed while this opened, or kept across a reconnection).
        return subscriptions.values.contains(where: \.wantsHeldFix) ? [.requestHeldFix(session)] : []
    }

    /// The session could not even begin (the system refused a thread or a pipe): everything waiting on it fails.
    mutating func sessionFailedToOpen(_ number: Int, _ error: LocationError) -> [Action] {
        guard case .opening(number, _) = source else { return [] }
        return end(with: error) + observe(.sessionEnded(error)) + stop()
    }

    mutating func sessionClosed(_ number: Int) -> [Action] {
        guard case .closing(number, let next) = source else { return [] }
        if case .reconnect(let delay) = next, isSessionWanted {
            let timer = newTimer()
            source = .waitingToReconnect(timer: timer)
            return [.scheduleReconnect(timer: timer, after: delay)]
        }
        source = .idle
        if isSessionWanted { return reconcile() }   // wanted again while it closed
        return stop()
    }

    mutating func reconnectTimerFired(_ timer: Int) -> [Action] {
        guard case .waitingToReconnect(timer) = source else { return [] }
        return isSessionWanted ? openNextSession() : stop()
    }

    /// Whether an event of session `number` is the current session's, and not of one that has ended.
    func isCurrent(session number: Int) -> Bool {
        switch source {
        case .opening(number, nil), .open(number, _): true
        default: false
        }
    }

    // MARK: A session's end

    /// The current session failed (`error`) or finished (`nil`: a recording's end). After a failure that may
    /// pass (``LocationError/Code/isTransient``), while fixes are still wanted and the policy allows, the manager
    /// reconnects: only requests that never saw a connection fail. Otherwise everything waiting ends, as it
    /// does when the policy's delay is a century or more (``Duration/never``).
    mutating func sessionEnded(with error: LocationError?) -> [Action] {
        var actions: [Action] = []
        let next: NextStep
        let retryDelay: Duration? = if let error, error.code.isTransient,
            reconnectPolicy.allowsRetry(afterFailures: failedAttempts + 1) {
            reconnectPolicy.delay(afterFailures: failedAttempts + 1, unit: jitter.nextUnit())
        } else { nil }
        if let error, let delay = retryDelay, !delay.meansNever {
            failedAttempts += 1
            actions = flushPendingEpochs() + endRequestsThatNeverConnected(with: error) + observe(.sessionEnded(error))
            if isSessionWanted {
                next = .reconnect(after: delay)
                actions += tell(status.reconnecting(attempt: failedAttempts + 1, after: delay, because: error))
            } else {
                next = .stop
            }
        } else {
            actions = end(with: error) + observe(.sessionEnded(error))
            next = .stop
        }
        watchdog.timer = nil
        switch source {
        case .opening(let number, _):
            source = .opening(number: number, ended: next)
        case .open(let number, let session):
            source = .closing(number: number, then: next)
            actions.append(.closeSession(number: number, session))
        case .idle, .closing, .waitingToReconnect:
            break
        }
        return actions
    }

    /// One-shot requests that have not seen a connection since they subscribed fail with `error`: their
    /// connection was refused, not lost.
    private mutating func endRequestsThatNeverConnected(with error: LocationError) -> [Action] {
        var notifications = Notifications()
        var actions: [Action] = []
        let failing = subscriptions.filter { $0.value.isOneShot && !$0.value.sawConnection }
        for (id, var subscription) in failing.sorted(by: { $0.key < $1.key }) {
            subscriptions[id] = nil
            switch subscription.consumer {
            case .delegate: actions.append(.fail(error, generation: generation))
            case .consumer(let consumer, _): notifications.add(.ended(error), for: id, of: &subscription, to: consumer)
            }
        }
        return notifications.actions + actions
    }

    // MARK: Connection and silence

    /// The session connected: the requests waiting have seen a connection (and so do those that come while it
    /// lasts), and the watchdog starts.
    mutating func sessionConnected(now: Duration) -> [Action] {
        connectedSince = now
        if case .opening(let number, _) = source { connectedSession = number }
        if case .open(let number, _) = source { connectedSession = number }
        for (id, subscription) in subscriptions where subscription.isOneShot { subscriptions[id]?.sawConnection = true }
        return tell(status.connected()) + heard(now: now)
    }

    /// Whether the current session has connected: a one-shot request that subscribes now has seen a connection.
    var isConnected: Bool { connectedSession.map(isCurrent(session:)) ?? false }

    /// The session connected or reported: the watchdog measures silence from now.
    mutating func heard(now: Duration) -> [Action] {
        watchdog.lastReport = now
        guard watchdog.timer == nil else { return [] }
        let timer = newTimer()
        watchdog.timer = timer
        return [.scheduleWatchdog(timer: timer, after: staleTimeout)]
    }

    /// The watchdog's timer: stale if the session has been silent for the stale timeout, otherwise it looks again
    /// when it would be.
    mutating func watchdogFired(_ timer: Int, now: Duration) -> [Action] {
        guard watchdog.timer == timer else { return [] }
        watchdog.timer = nil
        guard case .open = source else { return [] }
        let silence = now - watchdog.lastReport
        if silence >= staleTimeout { return tell(status.stale(for: silence)) }
        let next = newTimer()
        watchdog.timer = next
        return [.scheduleWatchdog(timer: next, after: staleTimeout - silence)]
    }
}
