import FoundationEssentials
import GPSDCore

/// The logic of ``LocationManager`` apart from its lock and threads, and the one place that decides whether the
/// source runs. Every input is a method that returns what to do; the manager does it after unlocking.
///
/// Consumers hold subscriptions (``Subscription``): the delegate's continuous updates and one-shot request, and
/// any number of the async bridge's requests and streams. A session of the source is open while any
/// subscription is live. The session's life is one enum, ``Source``; when a session fails while fixes are
/// still wanted, it moves on to waiting out a backoff (``ReconnectPolicy``) and opens the next. Opening and
/// closing are actions carried out outside the lock, one at a time: whoever carries one out reports back
/// (``sessionOpened(_:_:)``, ``sessionClosed(_:)``) and is handed the next, so the source always ends up as the
/// newest decision wants. The extensions hold the session's life (+Session) and what reports mean (+Events).
struct LocationManagerStateMachine {
    typealias Observer = @Sendable (Observation) -> Void

    /// The life of the source's session.
    enum Source {
        /// No session.
        case idle
        /// Session `number` is being opened; `ended` if it failed or finished before its opening returned.
        case opening(number: Int, ended: NextStep?)
        case open(number: Int, session: any SourceSession)
        /// Session `number` is being closed: nothing wants it any more, or it ended by itself.
        case closing(number: Int, then: NextStep)
        /// A session failed while fixes are still wanted: the next opens when timer `timer` fires.
        case waitingToReconnect(timer: Int)

        /// Whether session `number` or an earlier one is being opened or closed: halfway, on some thread.
        func isHalfway(upTo number: Int) -> Bool {
            switch self {
            case .opening(let current, _), .closing(let current, _): current <= number
            case .idle, .open, .waitingToReconnect: false
            }
        }
    }

    /// What comes after a session closes.
    enum NextStep {
        case stop
        case reconnect(after: Duration)
    }

    enum Action {
        case openSession(number: Int)
        case closeSession(number: Int, any SourceSession)
        case requestHeldFix(any SourceSession)
        /// Call the delegate with these fixes, unless ``LocationManager/stopUpdatingLocation()`` came in between
        /// (the generation changed).
        case deliver([Location], generation: Int)
        case fail(LocationError, generation: Int)
        case tellStatus(LocationStatus, generation: Int)
        case notify(any SubscriptionConsumer, [SubscriptionNotice])
        case observe([Observer], Observation)
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

    // Configuration.
    var desiredAccuracy: Double?
    var distanceFilter: Double?
    var requestTimeout: Duration
    var reconnectPolicy = ReconnectPolicy.default
    var staleTimeout = LocationManager.defaultStaleTimeout

    // The session; changed only by this machine's own methods, here and in its extensions.
    var source = Source.idle
    var sessionCount = 0
    /// Attempts to connect that failed since a connection last proved good (``proveConnection(by:now:)``): a
    /// peer that accepts and hangs up at once (a gpsd at its limit of clients), or greets first, does not reset
    /// the backoff.
    var failedAttempts = 0
    /// When the current session connected, if it has.
    var connectedSince: Duration?
    /// How long a session must hold, without a fix, to count as good.
    static let connectionProvenAfter = Duration.seconds(10)
    /// The session that has connected, while it is the current one.
    var connectedSession: Int?
    var timerCount = 0
    /// The watchdog's pending timer, and when the open session last reported.
    var watchdog: (timer: Int?, lastReport: Duration) = (nil, .zero)
    var jitter: SplitMix64

    // Who wants fixes.
    var subscriptions: [SubscriptionID: Subscription] = [:]
    /// Ids handed out and not yet subscribed: given back before subscribing, they never subscribe.
    private var reserved: Set<SubscriptionID> = []
    private var nextID = SubscriptionID.firstReservable
    var observers: [Int: Observer] = [:]
    /// How many observations were decided: each is numbered.
    private var observationCount: UInt64 = 0
    private var delegateRequestNumber = 0
    /// Bumped by ``stopUpdating()``: deliveries to the delegate decided before it are dropped.
    private(set) var generation = 0

    // What arrived.
    var coalescer = EpochCoalescer()
    /// The newest GST (1-sigma errors) of each receiver, by device, with the epoch it belongs to.
    var deviations: [String: (deviation: Location.Deviation, time: Date)] = [:]
    /// The newest fix each receiver reported live (not a POLL reply's), by device: what its epoch's GST completes.
    var newestLiveFix: [String: Location] = [:]
    /// The newest fix and the monotonic time it was current.
    var latest: (location: Location, at: Duration)?
    var satellites: SatelliteCount?
    var statistics = ReportStatistics()
    var loggedProblems: Set<ReportProblem.Kind> = []
    var status = StatusTracker()

    init(requestTimeout: Duration, jitterSeed: UInt64) {
        self.requestTimeout = requestTimeout
        self.jitter = SplitMix64(seed: jitterSeed)
    }

    /// Whether anything wants a session open: the one rule.
    var isSessionWanted: Bool { !subscriptions.isEmpty }

    /// Whether the delegate holds a subscription, and so hears of status changes.
    var delegateSubscribed: Bool { subscriptions[.delegateUpdates] != nil || subscriptions[.delegateRequest] != nil }

    // MARK: The delegate's subscriptions

    mutating func startUpdating() -> [Action] {
        if subscriptions[.delegateUpdates] == nil {
            subscriptions[.delegateUpdates] = Subscription(consumer: .delegate, isOneShot: false)
        }
        return reconcile()
    }

    mutating func stopUpdating() -> [Action] {
        subscriptions[.delegateUpdates] = nil
        subscriptions[.delegateRequest] = nil
        generation += 1
        return reconcile()
    }

    /// A new one-shot request of the delegate, replacing a pending one.
    mutating func requestLocation() -> [Action] {
        delegateRequestNumber += 1
        subscriptions[.delegateRequest] = Subscription(consumer: .delegate, isOneShot: true, sawConnection: isConnected)
        return reconcile() + [.scheduleRequestTimeout(request: delegateRequestNumber, after: requestTimeout)]
    }

    mutating func requestTimedOut(_ number: Int) -> [Action] {
        guard number == delegateRequestNumber, subscriptions.removeValue(forKey: .delegateRequest) != nil else {
            return []
        }
        let error = LocationError(
            .locationUnknown, "no fix\(desiredAccuracy.map { " within \($0) m" } ?? "") in \(requestTimeout)",
            bestLocation: latest?.location)
        return [.fail(error, generation: generation)] + reconcile()
    }

    // MARK: Other consumers' subscriptions

    /// An id to subscribe with. Giving it back (``unsubscribe(_:)``) before subscribing cancels the subscription.
    mutating func reserve() -> SubscriptionID {
        defer { nextID += 1 }
        let id = SubscriptionID(rawValue: nextID)
        reserved.insert(id)
        return id
    }

    /// Subscribes `consumer` under a reserved id; `nil` if the id was given back meanwhile (nothing is held).
    mutating func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, _ consumer: any SubscriptionConsumer
    ) -> [Action]? {
        guard reserved.remove(id) != nil else { return nil }
        subscriptions[id] = Subscription(
            consumer: .consumer(consumer, request), isOneShot: request.isOneShot, sawConnection: isConnected)
        var actions = reconcile()
        // A request that takes gpsd's held fix asks for it now if a session is open; one opening asks then.
        if request.maximumAge != nil, case .open(_, let session) = source { actions.append(.requestHeldFix(session)) }
        return actions
    }

    /// Gives an id back: a reservation is dropped, a live subscription ends. Returns what a live subscription
    /// had seen, or `nil` if it had ended already (or never subscribed).
    mutating func unsubscribe(_ id: SubscriptionID) -> (EndedSubscription, [Action])? {
        if reserved.remove(id) != nil { return nil }
        guard let subscription = subscriptions.removeValue(forKey: id) else { return nil }
        return (EndedSubscription(best: subscription.best), reconcile())
    }

    /// Ends the live subscriptions `ids` for their consumer (it stops): each gets the epochs it held back
    /// (``EpochDelivery/oncePerEpoch``), then `.ended(nil)`, in one batch decided here, so no delivery decided
    /// later can reach it. Returns the actions and the ids whose end was decided before (by the source's end, a
    /// failure, or another stop): their last notices are on their way from another thread.
    mutating func endSubscriptions(_ ids: [SubscriptionID]) -> (actions: [Action], endedBefore: [SubscriptionID]) {
        var notifications = Notifications()
        var endedBefore: [SubscriptionID] = []
        for id in ids.sorted() {
            guard let index = subscriptions.index(forKey: id) else {
                if !reserved.contains(id) { endedBefore.append(id) }
                continue
            }
            guard case .consumer(let consumer, _) = subscriptions.values[index].consumer else { continue }
            for key in subscriptions.values[index].heldEpochs.keys.sorted() {
                guard let pending = subscriptions.values[index].heldEpochs[key]?.pending else { continue }
                offer(pending, at: index, into: &notifications)
            }
            notifications.add(.ended(nil), for: id, of: &subscriptions.values[index], to: consumer)
            subscriptions.remove(at: index)
        }
        return (notifications.actions + reconcile(), endedBefore)
    }

    /// Registers an observer; returns its id and the status now (which it has not been told), as an observation
    /// numbered like the others.
    mutating func addObserver(_ observer: @escaping Observer) -> (id: Int, status: Observation) {
        defer { nextID += 1 }
        observers[nextID] = observer
        observationCount += 1
        return (nextID, Observation(event: .status(status.current), sequence: observationCount))
    }

    mutating func removeObserver(_ id: Int) {
        observers.removeValue(forKey: id)
    }

    mutating func observe(_ event: ManagerEvent) -> [Action] {
        guard !observers.isEmpty else { return [] }
        observationCount += 1
        return [.observe(Array(observers.values), Observation(event: event, sequence: observationCount))]
    }

    /// Tells observers, and the delegate if it holds a subscription, of a new status.
    mutating func tell(_ new: LocationStatus?) -> [Action] {
        guard let new else { return [] }
        return observe(.status(new)) + (delegateSubscribed ? [.tellStatus(new, generation: generation)] : [])
    }

    /// A fresh token for a timer, so that one that fires late is recognised and ignored.
    mutating func newTimer() -> Int {
        timerCount += 1
        return timerCount
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
