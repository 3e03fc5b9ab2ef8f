import GPSDCore
import GPSDSystem

/// The life of the source's sessions: opening, open, closing, and waiting out a backoff before the next; and the
/// watchdog that notices an open session gone silent. A value, changed only by its inputs: each returns what it
/// causes, and ``LocationManagerStateMachine`` carries that to the other parts and to the manager.
///
/// Opening and closing are carried out outside the manager's lock, one at a time, by whoever the machine hands
/// them to; that thread reports back (``opened(_:_:wanted:)``, ``failedToOpen(_:)``, ``closed(_:wanted:)``).
/// Meanwhile the session is halfway, and what happens then (it fails, nothing wants it any more) is kept in the
/// state until the report comes. Every session and timer has a number, so a late report or timer is ignored.
///
/// The states and their transitions are drawn in SessionState.swift.
struct SessionStateMachine {
    var reconnectPolicy = ReconnectPolicy.default
    var staleTimeout = LocationManager.defaultStaleTimeout
    /// How long an open session stays open after the last one-shot request left it (``demandChanged(wanted:lingering:)``).
    var linger = LocationManager.defaultSessionLinger
    /// How long a session must hold, without a fix, to count as good.
    static let connectionProvenAfter = Duration.seconds(10)

    private(set) var state = State.idle
    /// The number of the newest session begun.
    private(set) var sessionCount = 0
    /// Attempts to connect that failed since a connection last proved good (``provedGood()``): a peer that
    /// accepts and hangs up at once (a gpsd at its limit of clients), or greets first, does not reset the backoff.
    private(set) var failedAttempts = 0
    private var timerCount = 0
    /// Whether a session of this watch has connected since the watch began (a fresh start): gpsd has been reached
    /// (``hasReachedGPSD``).
    private var reached = false
    /// The failure the attempts to connect are retrying after, until one connects: what a request's timeout names,
    /// and before gpsd has been reached what a new request fails with (``failureBeforeReaching``).
    private(set) var lastFailure: LocationError?
    /// The watchdog's pending timer, and when the session last reported.
    private var watchdog: (timer: Int?, lastReport: Duration) = (nil, .zero)
    private var jitter: SplitMix64

    init(jitterSeed: UInt64) {
        jitter = SplitMix64(seed: jitterSeed)
    }

    // MARK: Opening and closing

    /// Something began or ceased to want fixes: a session opens if one is wanted and none is there, the open one
    /// closes if none is wanted, a wait for reconnection is called off. When the last one-shot request left
    /// (`lingering`), the open session lingers for ``linger`` instead, so that a loop of requests holds one
    /// session; one lingering closes at once when demand goes another way (a stop), and goes on when demand comes
    /// back.
    mutating func demandChanged(wanted: Bool, lingering: Bool = false) -> OnDemandChanged {
        switch state {
        case .idle where wanted:
            return .open(openNext(isFreshStart: true))
        case .open(var open) where wanted && open.lingerTimer != nil:
            open.lingerTimer = nil   // wanted again: the session goes on, and a late timer is ignored
            state = .open(open)
            return .none
        case .open(var open) where !wanted && lingering && linger > .zero:
            guard open.lingerTimer == nil else { return .none }
            let timer = Timer(id: newTimer(), after: linger)
            open.lingerTimer = timer.id
            state = .open(open)
            return linger.meansNever ? .none : .linger(timer)   // a linger of never: open until demand goes otherwise
        case .open(let open) where !wanted:
            state = .closing(Closing(from: open, then: .stop))
            watchdog.timer = nil
            return .close(SessionToClose(number: open.number, session: open.session))
        case .waitingToReconnect where !wanted:
            stop()
            return .stopped
        default:
            return .none
        }
    }

    mutating func opened(_ number: Int, _ session: any SourceSession, wanted: Bool) -> OnOpened {
        guard case .opening(let opening) = state, opening.number == number else {
            return .close(SessionToClose(number: number, session: session))
        }
        guard opening.ended == nil, wanted else {
            state = .closing(Closing(from: opening, then: opening.ended ?? .stop))
            return .close(SessionToClose(number: number, session: session))
        }
        state = .open(Open(from: opening, session: session))
        return .open(session)
    }

    /// The session could not even begin (the system refused a thread or a pipe).
    mutating func failedToOpen(_ number: Int) -> OnFailedToOpen {
        guard case .opening(let opening) = state, opening.number == number else { return .ignored }
        stop()
        return .stopped
    }

    mutating func closed(_ number: Int, wanted: Bool) -> OnClosed {
        guard case .closing(let closing) = state, closing.number == number else { return .ignored }
        if case .reconnect(let delay) = closing.then, wanted {
            let timer = Timer(id: newTimer(), after: delay)
            state = .waitingToReconnect(WaitingToReconnect(from: closing, timer: timer.id))
            return .reconnect(timer)
        }
        state = .idle
        if wanted { return .open(openNext(isFreshStart: true)) }   // wanted again while it closed
        stop()
        return .stopped
    }

    /// The linger of an open session that nothing wants has passed: it closes, unless the linger was called off.
    mutating func lingerTimerFired(_ timer: Int, wanted: Bool) -> OnLingerTimer {
        guard case .open(let open) = state, open.lingerTimer == timer, !wanted else { return .ignored }
        state = .closing(Closing(from: open, then: .stop))
        watchdog.timer = nil
        return .close(SessionToClose(number: open.number, session: open.session))
    }

    mutating func reconnectTimerFired(_ timer: Int, wanted: Bool) -> OnReconnectTimer {
        guard case .waitingToReconnect(let waiting) = state, waiting.timer == timer else { return .ignored }
        guard wanted else {
            stop()
            return .stopped
        }
        return .open(openNext(isFreshStart: false))
    }

    private mutating func openNext(isFreshStart: Bool) -> SessionToOpen {
        if isFreshStart { (reached, lastFailure) = (false, nil) }
        sessionCount += 1
        state = .opening(Opening(number: sessionCount))
        return SessionToOpen(number: sessionCount, attempt: failedAttempts + 1, isFreshStart: isFreshStart)
    }

    /// No session, and none to come.
    private mutating func stop() {
        state = .idle
        failedAttempts = 0
        reached = false
        lastFailure = nil
        watchdog.timer = nil
    }

    // MARK: A session's end

    /// The current session failed (`error`) or finished (`nil`: a recording's end), at `now` if it failed by
    /// itself (a connection that held ``connectionProvenAfter`` was good, whatever it brought). After a failure
    /// that may pass (``LocationError/Code/isTransient``), while the policy allows, it is retried; otherwise,
    /// or when the policy's delay is a century or more (``Duration/never``), everything waiting ends. The state
    /// moves on with ``close(then:)``, once the caller knows whether fixes are still wanted.
    mutating func ended(by error: LocationError?, failedAt now: Duration? = nil) -> OnEnded {
        if let now, let since = connectedSince, now - since >= Self.connectionProvenAfter { failedAttempts = 0 }
        guard let error, error.code.isTransient, reconnectPolicy.allowsRetry(afterFailures: failedAttempts + 1) else {
            return .end
        }
        let delay = reconnectPolicy.delay(afterFailures: failedAttempts + 1, unit: jitter.nextUnit())
        guard !delay.meansNever else { return .end }
        failedAttempts += 1
        lastFailure = error
        return .retry(after: delay, attempt: failedAttempts + 1, because: error)
    }

    /// The current session is over (``ended(by:failedAt:)``): an open one is to be closed, an opening one will be
    /// when its opening returns; then comes `next`.
    mutating func close(then next: NextStep) -> SessionToClose? {
        watchdog.timer = nil
        switch state {
        case .opening(var opening):
            opening.ended = next
            state = .opening(opening)
            return nil
        case .open(let open):
            state = .closing(Closing(from: open, then: next))
            return SessionToClose(number: open.number, session: open.session)
        case .idle, .closing, .waitingToReconnect:
            return nil
        }
    }

    /// The connection proved good (it brought a fix): the backoff starts over.
    mutating func provedGood() {
        failedAttempts = 0
    }

    // MARK: Connection and silence

    /// The current session connected: the watchdog starts.
    mutating func connected(at now: Duration) -> Timer? {
        reached = true
        lastFailure = nil
        switch state {
        case .opening(var opening):
            opening.connectedSince = now
            state = .opening(opening)
        case .open(var open):
            open.connectedSince = now
            state = .open(open)
        case .idle, .closing, .waitingToReconnect:
            break
        }
        return reported(at: now)
    }

    /// The session connected or reported: the watchdog measures silence from now. Returns the watchdog's timer
    /// to start, if none is running.
    mutating func reported(at now: Duration) -> Timer? {
        watchdog.lastReport = now
        guard watchdog.timer == nil else { return nil }
        let timer = Timer(id: newTimer(), after: staleTimeout)
        watchdog.timer = timer.id
        return timer
    }

    mutating func watchdogFired(_ timer: Int, now: Duration) -> OnWatchdog {
        guard watchdog.timer == timer else { return .ignored }
        watchdog.timer = nil
        guard case .open = state else { return .ignored }
        let silence = now - watchdog.lastReport
        if silence >= staleTimeout { return .stale(silentFor: silence) }
        let next = Timer(id: newTimer(), after: staleTimeout - silence)
        watchdog.timer = next.id
        return .rescheduled(next)
    }

    /// A fresh token for a timer, so that one that fires late is recognised and ignored.
    private mutating func newTimer() -> Int {
        timerCount += 1
        return timerCount
    }

    // MARK: What it is

    /// Whether an event of session `number` is the current session's, and not of one that has ended.
    func isCurrent(session number: Int) -> Bool {
        switch state {
        case .opening(let opening): opening.number == number && opening.ended == nil
        case .open(let open): open.number == number
        case .idle, .closing, .waitingToReconnect: false
        }
    }

    /// When the current session connected, if it has.
    private var connectedSince: Duration? {
        switch state {
        case .opening(let opening): opening.connectedSince
        case .open(let open): open.connectedSince
        case .idle, .closing, .waitingToReconnect: nil
        }
    }

    /// Whether the current session has connected (the session's own state; a one-shot request judges by
    /// ``hasReachedGPSD``, which a new watch clears).
    var isConnected: Bool {
        switch state {
        case .opening(let opening): opening.ended == nil && opening.connectedSince != nil
        case .open(let open): open.connectedSince != nil
        case .idle, .closing, .waitingToReconnect: false
        }
    }

    /// Whether a session of this watch has connected since the watch began. A one-shot request that subscribes
    /// now waits out whatever may pass (reconnection, gpsd unreachable during a backoff, a receiver gone) until
    /// its timeout; one that subscribes before fails when an attempt fails, or at once if one has
    /// (``failureBeforeReaching``).
    var hasReachedGPSD: Bool { reached }

    /// What a one-shot request that subscribes now fails with at once: the last attempt's failure, while gpsd has
    /// not been reached since the watch began. So a request is answered the same whether it subscribed before the
    /// watch's first attempt failed or after (a stream started the watch a moment earlier): a program started
    /// without gpsd learns so at once, whatever its threads' order. `nil` while an attempt is still to fail
    /// (a request then fails with it) or once gpsd has been reached (what fails then may pass).
    var failureBeforeReaching: LocationError? { reached ? nil : lastFailure }

    /// Whether the open session lingers after the last one-shot request, wanted by nothing.
    var isLingering: Bool {
        if case .open(let open) = state { return open.lingerTimer != nil }
        return false
    }

    /// The open session, if one is.
    var openSession: (any SourceSession)? {
        if case .open(let open) = state { return open.session }
        return nil
    }

    /// Whether session `number` or an earlier one is being opened or closed: halfway, on some thread.
    func isHalfway(upTo number: Int) -> Bool {
        switch state {
        case .opening(let opening): opening.number <= number
        case .closing(let closing): closing.number <= number
        case .idle, .open, .waitingToReconnect: false
        }
    }
}
