import FoundationEssentials
import GPSDCore

/// The logic of ``LocationManager`` apart from its lock and threads: three parts, each a value with its own
/// state and results, and this machine, which hands each input to the part it concerns and turns the part's
/// result into what the manager does after unlocking (``Action``), as HTTPConnectionPool's state machine hands
/// its inputs to its HTTP/1 connections.
///
/// - ``SessionStateMachine``: the session's life, reconnection and backoff, the watchdog.
/// - ``SubscriptionTable``: who wants fixes (subscriptions, reservations, filters, held epochs) and observers.
/// - ``EpochAssembly``: one fix per receiver epoch, joined with its GST; the newest fix; statistics.
///
/// A session is wanted while the table is not empty; every change of that goes through ``demandChanged()``, the
/// one place that opens and closes sessions. The inputs are in the extensions: the consumers' (+Consumers) and
/// the session's (+Session).
struct LocationManagerStateMachine {
    /// What the manager carries out after unlocking, in order.
    enum Action {
        case openSession(number: Int)
        case closeSession(number: Int, any SourceSession)
        case requestHeldFix(any SourceSession)
        /// Call the delegate with these fixes, unless ``LocationManager/stopUpdatingLocation()`` came in between
        /// (the generation changed).
        case deliver([Location], generation: Int)
        /// Call the delegate with a heading, unless ``LocationManager/stopUpdatingHeading()`` came in between (the
        /// heading generation changed).
        case deliverHeading(Heading, generation: Int)
        case fail(LocationError, generation: Int)
        case reportStatus(LocationStatus, generation: Int)
        /// Tell the delegate of a SKY report's satellites.
        case reportSatellites(SkyView, generation: Int)
        /// Tell the delegate its desired accuracy has rejected every fix for the stale timeout.
        case reportRejection(FixRejection, generation: Int)
        case notify(any SubscriptionConsumer, [SubscriptionNotice])
        /// Tell these observers of an event.
        case observe([(id: Int, observer: SubscriptionTable.Observer)], ManagerEvent)
        case scheduleRequestTimeout(request: Int, after: Duration)
        case scheduleReconnect(timer: Int, after: Duration)
        case scheduleWatchdog(timer: Int, after: Duration)
        /// Log the first report problem of its kind.
        case log(ReportProblem)

        /// Whether carrying it out opens or closes a session.
        var opensOrClosesASession: Bool {
            switch self {
            case .openSession, .closeSession: true
            default: false
            }
        }
    }

    var session: SessionStateMachine
    var subscriptions = SubscriptionTable()
    var epochs = EpochAssembly()
    var status = StatusTracker()
    /// The newest heading gpsd reported (an ATT with a heading), whoever wanted it.
    var heading: Heading?
    var requestTimeout: Duration

    init(requestTimeout: Duration, jitterSeed: UInt64) {
        self.requestTimeout = requestTimeout
        session = SessionStateMachine(jitterSeed: jitterSeed)
    }

    // MARK: Demand

    /// Opens a session when something wants one, closes it when nothing does: every change of demand ends here.
    mutating func demandChanged() -> [Action] {
        switch session.demandChanged(wanted: subscriptions.wantsSession) {
        case .none: []
        case .open(let next): open(next)
        case .close(let closing): [.closeSession(number: closing.number, closing.session)]
        case .stopped: announce(status.stopped())
        }
    }

    /// What opening session `next` means: a fresh start forgets the epochs; status says which attempt it is.
    mutating func open(_ next: SessionStateMachine.SessionToOpen) -> [Action] {
        if next.isFreshStart { epochs.startAfresh() }
        return announce(status.connecting(attempt: next.attempt)) + [.openSession(number: next.number)]
    }

    // MARK: Telling

    /// Tells observers, the subscriptions that follow the status, and the delegate if it holds a subscription, of
    /// a new status.
    mutating func announce(_ new: LocationStatus?) -> [Action] {
        guard let new else { return [] }
        return observe(.status(new)) + subscriptions.tellStatus(new).actions
            + (subscriptions.delegateSubscribed ? [.reportStatus(new, generation: subscriptions.generation)] : [])
    }

    func observe(_ event: ManagerEvent) -> [Action] {
        let observers = subscriptions.observers()
        return observers.isEmpty ? [] : [.observe(observers, event)]
    }

    /// The end of subscriptions, as actions: the consumers' notices, then the delegate's failure.
    func actions(of ending: SubscriptionTable.Ending) -> [Action] {
        ending.notifications.actions + (ending.delegateFailure.map { [.fail($0, generation: subscriptions.generation)] } ?? [])
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator whose whole state is one seed, so a run reproduces:
/// the reconnect jitter's numbers, and the tests' random scripts.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0 ..< 1.
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
