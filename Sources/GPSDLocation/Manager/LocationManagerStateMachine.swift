import FoundationEssentials
import GPSDCore

/// The logic of ``LocationManager`` apart from its lock and threads: three parts, each a value with its own
/// state and results, and this machine, which hands each input to the part it concerns and turns the part's
/// result into what the manager does after unlocking (a ``Decision``), as HTTPConnectionPool's state machine hands
/// its inputs to its HTTP/1 connections.
///
/// - ``SessionStateMachine``: the session's life, reconnection and backoff, the watchdog.
/// - ``SubscriptionTable``: who wants fixes (subscriptions, reservations, filters, held epochs) and observers.
/// - ``EpochAssembly``: one fix per receiver epoch, joined with its GST; the newest fix; statistics.
///
/// A session is wanted while the table is not empty; every change of that goes through ``demandChanged(lingering:)``, the
/// one place that opens and closes sessions for demand (an open session that the last one-shot request left lingers
/// there, and its linger's timer closes it: ``lingerTimerFired(_:)``). The inputs are in the extensions: the consumers' (+Consumers) and
/// the session's (+Session).
struct LocationManagerStateMachine {
    var session: SessionStateMachine
    var subscriptions = SubscriptionTable()
    var epochs = EpochAssembly()
    var status = StatusTracker()
    /// Reconnections, fixes, the time in each status: ``LocationHealth``.
    var health = HealthTracker()
    /// The newest heading gpsd reported (an ATT with a heading), whoever wanted it, with its arrival.
    var heading: Heading?
    /// Whether headings keep coming.
    var headingWatch = HeadingWatch()
    /// Whether the receiver is at rest, by every fix received (for ``LocationManager/snapshot``).
    var stationary = StationaryDetector()
    /// How many sessions have connected.
    var connections = 0
    private(set) var requestTimeout: Duration
    /// How live timelines made from now on judge rest.
    private(set) var stationaryDetection = StationaryDetector.Configuration()

    init(requestTimeout: Duration, jitterSeed: UInt64) {
        self.requestTimeout = requestTimeout
        session = SessionStateMachine(jitterSeed: jitterSeed)
    }

    // MARK: Configuration

    /// The manager's settings, as its properties set them.
    struct Configuration: Hashable {
        var desiredAccuracy: Double?
        var distanceFilter: Double?
        var headingFilter: Double?
        var requestTimeout: Duration
        var reconnectPolicy: ReconnectPolicy
        var staleTimeout: Duration
        var sessionLinger: Duration
        var stationaryDetection: StationaryDetector.Configuration
    }

    var configuration: Configuration {
        Configuration(
            desiredAccuracy: subscriptions.desiredAccuracy, distanceFilter: subscriptions.distanceFilter,
            headingFilter: subscriptions.headingFilter, requestTimeout: requestTimeout,
            reconnectPolicy: session.reconnectPolicy, staleTimeout: session.staleTimeout,
            sessionLinger: session.linger, stationaryDetection: stationaryDetection)
    }

    /// New settings, each handed to the part it concerns: they apply from the next fix, request or timer on. A
    /// negative timeout is taken as zero, a century or more as never.
    mutating func configure(_ new: Configuration) {
        subscriptions.desiredAccuracy = new.desiredAccuracy
        subscriptions.distanceFilter = new.distanceFilter
        subscriptions.headingFilter = new.headingFilter
        requestTimeout = new.requestTimeout.asTimeout
        session.reconnectPolicy = new.reconnectPolicy
        session.staleTimeout = new.staleTimeout.asTimeout
        session.linger = new.sessionLinger.asTimeout
        if new.stationaryDetection != stationaryDetection {
            stationary = StationaryDetector(configuration: new.stationaryDetection)   // judged afresh by the new rule
        }
        stationaryDetection = new.stationaryDetection
    }

    // MARK: Demand

    /// Opens a session when something wants one, closes it when nothing does: every change of demand ends here.
    /// `lingering`: a one-shot request left, so the session may linger (``SessionStateMachine/linger``).
    mutating func demandChanged(into decision: inout Decision, lingering: Bool = false) {
        switch session.demandChanged(wanted: subscriptions.wantsSession, lingering: lingering) {
        case .none: break
        case .open(let next): open(next, into: &decision)
        case .close(let closing): decision.transition(.close(number: closing.number, closing.session))
        case .linger(let timer): decision.timers.append(.linger(timer: timer.id, after: timer.after))
        case .stopped: announce(status.stopped(), into: &decision)
        }
    }

    /// ``demandChanged(into:lingering:)`` as an input's whole decision.
    mutating func demandChanged(lingering: Bool = false) -> Decision {
        var decision = Decision()
        demandChanged(into: &decision, lingering: lingering)
        return decision
    }

    /// What opening session `next` means: a fresh start forgets the epochs; status says which attempt it is.
    mutating func open(_ next: SessionStateMachine.SessionToOpen, into decision: inout Decision) {
        if next.isFreshStart {
            epochs.startAfresh()
            // The new watch has not reached gpsd: requests made while the last one closed fail with its first attempt.
            subscriptions.watchBegan()
        }
        // The next session's headings start the watch anew; a heading held from before is not current until one
        // of the new session comes, which ends the silence.
        headingWatch.reset(silent: heading != nil)
        if heading != nil { decision.notifications.add(subscriptions.tellHeadingSilence(true)) }
        announce(status.connecting(attempt: next.attempt), into: &decision)
        decision.transition(.open(number: next.number))
    }

    // MARK: Telling

    /// Tells observers, the subscriptions that follow the status, and the delegate if it holds a subscription, of
    /// a new status.
    mutating func announce(_ new: LocationStatus?, into decision: inout Decision) {
        guard let new else { return }
        switch new {
        case .fix, .stale, .connected: break
        default: stationary.reset()   // whatever made fixes stop makes rest unknown, as for a live timeline
        }
        health.announced(new)
        observe(.status(new), into: &decision)
        decision.notifications.add(subscriptions.tellStatus(new))
        if subscriptions.delegateSubscribed { decision.call(.status(new), generation: subscriptions.generation) }
    }

    func observe(_ event: ManagerEvent, into decision: inout Decision) {
        let observers = subscriptions.observers()
        if !observers.isEmpty { decision.observations.add(event, for: observers) }
    }

    /// The end of subscriptions: the consumers' notices, then the delegate's failure.
    func end(_ ending: SubscriptionTable.Ending, into decision: inout Decision) {
        decision.notifications.add(ending.notifications)
        if let failure = ending.delegateFailure { decision.call(.failure(failure), generation: subscriptions.generation) }
    }
}

extension LocationManagerStateMachine {
    /// What ``LocationManager/snapshot`` reads, at monotonic time `now` (`instant` on the continuous clock).
    func snapshot(now: Duration, instant: ContinuousClock.Instant) -> LocationSnapshot {
        let location = epochs.latest?.location
        let current = status.current
        let isFix = if case .fix = current { true } else { false }
        let headingSilent = headingWatch.isSilent
            || headingWatch.lastArrival.map { now - $0 >= session.staleTimeout } ?? true
        let headingAge = heading?.age(at: instant)
        // A heading measured the stale timeout ago or more is stale however it came (one with a time of its own,
        // held in gpsd's backlog): the age and the flag never disagree.
        let headingOld = headingAge.map { $0 >= session.staleTimeout } ?? false
        return LocationSnapshot(
            instant: instant, location: location, locationAge: location?.age(at: instant),
            heading: heading, headingAge: headingAge, status: current,
            isStale: location != nil && !isFix,
            isHeadingStale: heading != nil && (headingSilent || headingOld || !current.isReporting),
            isStationary: stationary.isStationary, satellites: epochs.satellites, connections: connections)
    }
}
