import Foundation

/// The logic of ``LocationManager`` apart from its lock and threads, and the one place that decides whether the
/// source runs. Every input is a method that returns what to do; the manager does it after unlocking.
///
/// Consumers hold subscriptions (``Subscription``): the delegate's continuous updates and one-shot request, and
/// any number of the async bridge's requests and streams. A session of the source is open while any
/// subscription is live. The session's life is one enum, ``Source``. Opening and closing are actions carried
/// out outside the lock, one at a time: whoever carries one out reports back (``sessionOpened(_:_:)``,
/// ``sessionClosed(_:)``) and is handed the next, so the source always ends up as the newest decision wants.
struct LocationManagerStateMachine {
    typealias Observer = @Sendable (ManagerEvent) -> Void

    /// The life of the source's session.
    enum Source {
        /// No session.
        case idle
        /// Session `number` is being opened; `ended` if it failed or finished before its opening returned.
        case opening(number: Int, ended: Bool)
        case open(number: Int, session: any SourceSession)
        /// Session `number` is being closed: nothing wants it any more, or it ended by itself.
        case closing(number: Int)
        // Reconnection goes here: a session that failed while fixes are still wanted waits out its backoff in a
        // state of its own, between `closing` and the next `opening`.
    }

    enum Action {
        case openSession(number: Int)
        case closeSession(number: Int, any SourceSession)
        case requestHeldFix(any SourceSession)
        /// Call the delegate with these fixes, unless ``LocationManager/stopUpdatingLocation()`` came in between
        /// (the generation changed).
        case deliver([Location], generation: Int)
        case fail(LocationError, generation: Int)
        case notify(any SubscriptionConsumer, [(SubscriptionID, SubscriptionEvent)])
        case observe([Observer], ManagerEvent)
        case scheduleRequestTimeout(request: Int, after: Duration)
    }

    // Configuration of the delegate API.
    var desiredAccuracy: Double?
    var distanceFilter: Double?
    var requestTimeout: Duration

    private(set) var source = Source.idle
    private var sessionCount = 0
    /// Changed only by this machine's own methods, here and in its extension (+Events).
    var subscriptions: [SubscriptionID: Subscription] = [:]
    /// Ids handed out and not yet subscribed: given back before subscribing, they never subscribe.
    private var reserved: Set<SubscriptionID> = []
    private var nextID = SubscriptionID.firstReservable
    private var observers: [Int: Observer] = [:]
    /// A one-shot request with a maximum age wants gpsd's held fix, and no open session has been asked yet.
    private var heldFixWanted = false
    private var delegateRequestNumber = 0
    /// Bumped by ``stopUpdating()``: deliveries to the delegate decided before it are dropped.
    private(set) var generation = 0

    // What arrived. Changed only by this machine's own methods, here and in its extension (+Events).
    var coalescer = EpochCoalescer()
    /// The newest fix and the monotonic time it was current.
    var latest: (location: Location, at: Duration)?
    private(set) var satellites: SatelliteCount?
    private(set) var skippedLines = 0

    init(requestTimeout: Duration) { self.requestTimeout = requestTimeout }

    /// Whether anything wants a session open: the one rule.
    var isSessionWanted: Bool { !subscriptions.isEmpty }

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
        subscriptions[.delegateRequest] = Subscription(consumer: .delegate, isOneShot: true)
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
        subscriptions[id] = Subscription(consumer: .consumer(consumer, request), isOneShot: request.isOneShot)
        var actions = reconcile()
        if request.maximumAge != nil {
            if case .open(_, let session) = source {
                actions.append(.requestHeldFix(session))
            } else {
                heldFixWanted = true
            }
        }
        return actions
    }

    /// Gives an id back: a reservation is dropped, a live subscription ends. Returns what a live subscription
    /// had seen, or `nil` if it had ended already (or never subscribed).
    mutating func unsubscribe(_ id: SubscriptionID) -> (EndedSubscription, [Action])? {
        if reserved.remove(id) != nil { return nil }
        guard let subscription = subscriptions.removeValue(forKey: id) else { return nil }
        return (EndedSubscription(best: subscription.best), reconcile())
    }

    mutating func addObserver(_ observer: @escaping Observer) -> Int {
        defer { nextID += 1 }
        observers[nextID] = observer
        return nextID
    }

    mutating func removeObserver(_ id: Int) {
        observers.removeValue(forKey: id)
    }

    // MARK: The session

    /// Opens a session when something wants one, closes it when nothing does: every change of demand ends here.
    mutating func reconcile() -> [Action] {
        switch source {
        case .idle where isSessionWanted:
            sessionCount += 1
            coalescer.reset()
            source = .opening(number: sessionCount, ended: false)
            return [.openSession(number: sessionCount)]
        case .open(let number, let session) where !isSessionWanted:
            source = .closing(number: number)
            return [.closeSession(number: number, session)]
        default:
            return []
        }
    }

    mutating func sessionOpened(_ number: Int, _ session: any SourceSession) -> [Action] {
        guard case .opening(number, let ended) = source else { return [.closeSession(number: number, session)] }
        if ended || !isSessionWanted {
            source = .closing(number: number)
            return [.closeSession(number: number, session)]
        }
        source = .open(number: number, session: session)
        guard heldFixWanted else { return [] }
        heldFixWanted = false
        return [.requestHeldFix(session)]
    }

    /// The session could not even begin: everything waiting on it fails.
    mutating func sessionFailedToOpen(_ number: Int, _ error: LocationError) -> [Action] {
        guard case .opening(number, _) = source else { return [] }
        source = .idle
        heldFixWanted = false   // whoever wanted it has just been told of the failure
        return end(with: error) + observe(.sessionEnded(error))
    }

    mutating func sessionClosed(_ number: Int) -> [Action] {
        guard case .closing(number) = source else { return [] }
        source = .idle
        if !isSessionWanted { heldFixWanted = false }
        return reconcile()
    }

    /// The current session failed or finished by itself: it is to be closed (once its opening has returned).
    mutating func sessionEnded() -> [Action] {
        switch source {
        case .opening(let number, _):
            source = .opening(number: number, ended: true)
            return []
        case .open(let number, let session):
            source = .closing(number: number)
            return [.closeSession(number: number, session)]
        case .idle, .closing:
            return []
        }
    }

    /// Whether an event of session `number` is the current session's, and not of one that has ended.
    func isCurrent(session number: Int) -> Bool {
        switch source {
        case .opening(number, false), .open(number, _): true
        default: false
        }
    }

    mutating func receive(_ count: SatelliteCount) -> [Action] {
        satellites = count
        return observe(.satellites(count))
    }

    func observe(_ event: ManagerEvent) -> [Action] {
        observers.isEmpty ? [] : [.observe(Array(observers.values), event)]
    }

    mutating func skippedLine() { skippedLines += 1 }
}
