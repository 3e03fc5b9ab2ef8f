import FoundationEssentials
import GPSDCore

/// Who wants fixes, and what each has been given: the delegate's updates and request, the async bridge's
/// requests and streams, their reservations, filters and held epochs, and the observers. A value: each input
/// returns what it causes (notices for consumers in ``Notifications``, whether the delegate is called), and
/// ``LocationManagerStateMachine`` carries it out. A session is wanted while the table is not empty.
struct SubscriptionTable {
    /// Told of each ``ManagerEvent`` in the order decided, one call at a time (``ManagerStorage``).
    typealias Observer = @Sendable (ManagerEvent) -> Void

    /// The delegate's filters: the manager's ``LocationManager/desiredAccuracy`` and
    /// ``LocationManager/distanceFilter``.
    var desiredAccuracy: Double?
    var distanceFilter: Double?
    /// The delegate's heading filter: the manager's ``LocationManager/headingFilter``.
    var headingFilter: Double? = 1

    /// Changed only by the table's own methods, here and in +Fixes.
    var subscriptions = SubscriptionList()
    /// Ids handed out and not yet subscribed: given back before subscribing, they never subscribe.
    private var reserved: Set<SubscriptionID> = []
    private var nextID = SubscriptionID.firstReservable
    private var observers: [Int: Observer] = [:]
    /// The number of the delegate's newest one-shot request, so that a late timeout of an earlier one is ignored.
    private var delegateRequestNumber = 0
    /// Bumped by ``stopDelegate()``: deliveries to the delegate decided before it are dropped.
    private(set) var generation = 0
    /// Bumped by ``stopDelegateHeadings()``: headings for the delegate decided before it are dropped.
    private(set) var headingGeneration = 0

    /// Whether anything wants a session open: the one rule.
    var wantsSession: Bool { !subscriptions.isEmpty }

    /// Whether the delegate holds a subscription, and so hears of status changes.
    var delegateSubscribed: Bool {
        subscriptions[.delegateUpdates] != nil || subscriptions[.delegateRequest] != nil
            || subscriptions[.delegateHeadings] != nil
    }

    /// Whether a request waits for gpsd's held fix.
    var wantsHeldFix: Bool { subscriptions.contains(where: \.wantsHeldFix) }

    // MARK: The delegate

    mutating func startDelegateUpdates() {
        if subscriptions[.delegateUpdates] == nil {
            subscriptions[.delegateUpdates] = Subscription(consumer: .delegate, isOneShot: false)
        }
    }

    /// Ends the delegate's updates and request: what was decided for it before is dropped.
    mutating func stopDelegate() {
        subscriptions[.delegateUpdates] = nil
        subscriptions[.delegateRequest] = nil
        generation += 1
    }

    /// The delegate's headings: every one that passes ``headingFilter``, until ``stopDelegateHeadings()``.
    mutating func startDelegateHeadings() {
        if subscriptions[.delegateHeadings] == nil {
            subscriptions[.delegateHeadings] = Subscription(consumer: .delegate, isOneShot: false, takesHeadings: true)
        }
    }

    /// Ends the delegate's headings: those decided for it before are dropped.
    mutating func stopDelegateHeadings() {
        subscriptions[.delegateHeadings] = nil
        headingGeneration += 1
    }

    /// A new one-shot request of the delegate, replacing a pending one. Returns its number, for its timeout.
    mutating func requestDelegateLocation(sawConnection: Bool) -> Int {
        delegateRequestNumber += 1
        subscriptions[.delegateRequest] = Subscription(consumer: .delegate, isOneShot: true, sawConnection: sawConnection)
        return delegateRequestNumber
    }

    /// The timeout of the delegate's request `number`: whether it was still pending (now ended).
    mutating func delegateRequestTimedOut(_ number: Int) -> Bool {
        number == delegateRequestNumber && subscriptions.removeValue(forKey: .delegateRequest) != nil
    }

    // MARK: Other consumers

    /// An id to subscribe with. Giving it back (``unsubscribe(_:)``) before subscribing cancels the subscription.
    mutating func reserve() -> SubscriptionID {
        defer { nextID += 1 }
        let id = SubscriptionID(rawValue: nextID)
        reserved.insert(id)
        return id
    }

    /// Subscribes `consumer` under a reserved id; false if the id was given back meanwhile (nothing is held).
    mutating func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, _ consumer: any SubscriptionConsumer, sawConnection: Bool
    ) -> Bool {
        guard reserved.remove(id) != nil else { return false }
        subscriptions[id] = Subscription(
            consumer: .consumer(consumer, request), isOneShot: request.isOneShot, takesHeadings: request.takesHeadings,
            sawConnection: sawConnection)
        return true
    }

    /// Gives an id back: a reservation is dropped, a live subscription ends. Returns what a live subscription
    /// had seen, or `nil` if it had ended already (or never subscribed).
    mutating func unsubscribe(_ id: SubscriptionID) -> EndedSubscription? {
        if reserved.remove(id) != nil { return nil }
        guard let subscription = subscriptions.removeValue(forKey: id) else { return nil }
        return EndedSubscription(best: subscription.best, refusedHeldFix: subscription.refusedHeldFix)
    }

    /// Ends the live subscriptions `ids` for their consumer (it stops): each gets the epochs it held back
    /// (``EpochDelivery/oncePerEpoch``), then `.ended(nil)`, in one batch, so no delivery decided later can reach
    /// it. Also returns the ids whose end was decided, now or before (by the source's end, a failure, or another
    /// stop): all but those only reserved, whose consumer is told nothing.
    mutating func endSubscriptions(_ ids: [SubscriptionID]) -> (Notifications, ended: [SubscriptionID]) {
        var notifications = Notifications()
        var ended: [SubscriptionID] = []
        for id in ids.sorted() {
            guard let index = subscriptions.index(forKey: id) else {
                if !reserved.contains(id) { ended.append(id) }
                continue
            }
            guard case .consumer(let consumer, _) = subscriptions.entries[index].consumer else { continue }
            ended.append(id)
            for key in subscriptions.entries[index].heldEpochs.devices.sorted() {
                guard let pending = subscriptions.entries[index].heldEpochs.pending(of: key) else { continue }
                passOn(pending, at: index, into: &notifications)
            }
            notifications.add(.ended(nil), for: id, to: consumer)
            subscriptions.remove(at: index)
        }
        return (notifications, ended)
    }

    // MARK: Connection and ends

    /// A watch begins afresh: no one-shot request waiting has seen it reach gpsd.
    mutating func watchBegan() {
        for index in subscriptions.entries.indices where subscriptions.entries[index].isOneShot {
            subscriptions.entries[index].sawConnection = false
        }
    }

    /// The session connected: the one-shot requests waiting have seen a connection.
    mutating func sessionConnected() {
        for index in subscriptions.entries.indices where subscriptions.entries[index].isOneShot {
            subscriptions.entries[index].sawConnection = true
        }
    }

    /// What the end of every subscription means for the delegate and the consumers.
    struct Ending {
        var notifications = Notifications()
        /// What the delegate is told, if anything.
        var delegateFailure: LocationError?
    }

    /// Every subscription ends, each told once: with `error`, or at the end of a recording (`nil`), when a
    /// one-shot fails with `locationUnknown` (the delegate's with `latest`) and a continuous one ends quietly.
    mutating func endAll(with error: LocationError?, latest: Location?) -> Ending {
        var ending = Ending()
        flushHeldEpochs(into: &ending.notifications)
        for (id, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            switch subscription.consumer {
            case .delegate:
                if let error {
                    ending.delegateFailure = error
                } else if subscription.isOneShot {
                    ending.delegateFailure = LocationError(
                        .locationUnknown, "the recording ended before a fix", bestLocation: latest)
                }
            case .consumer(let consumer, _):
                let reason = error ?? (subscription.isOneShot ? LocationError(
                    .locationUnknown, "the source ended before a fix", bestLocation: subscription.best) : nil)
                ending.notifications.add(.ended(reason), for: id, to: consumer)
            }
        }
        subscriptions.removeAll()
        return ending
    }

    /// One-shot requests made before the watch reached gpsd fail with `error`, an attempt's failure: gpsd could
    /// not be reached when they were made. Those made after it was reached, or that have seen a session connect,
    /// wait.
    mutating func endRequestsThatNeverConnected(with error: LocationError) -> Ending {
        var ending = Ending()
        let failing = subscriptions.filter { $0.value.isOneShot && !$0.value.sawConnection }
        for (id, subscription) in failing.sorted(by: { $0.key < $1.key }) {
            subscriptions[id] = nil
            switch subscription.consumer {
            case .delegate: ending.delegateFailure = error
            case .consumer(let consumer, _): ending.notifications.add(.ended(error), for: id, to: consumer)
            }
        }
        return ending
    }

    // MARK: Status

    /// Tells the subscriptions that follow the status (live timelines) of `status`; only `id`, if given.
    mutating func tellStatus(_ status: LocationStatus, only id: SubscriptionID? = nil) -> Notifications {
        var notifications = Notifications()
        for index in subscriptions.entries.indices {
            guard id == nil || subscriptions.ids[index] == id,
                  case .consumer(let consumer, let request) = subscriptions.entries[index].consumer, request.followsStatus
            else { continue }
            notifications.add(.status(status), for: subscriptions.ids[index], to: consumer)
        }
        return notifications
    }

    /// Tells the live timelines that headings went silent (no heading for the stale timeout) or, with `false`,
    /// that one came again.
    mutating func tellHeadingSilence(_ silent: Bool) -> Notifications {
        var notifications = Notifications()
        for index in subscriptions.entries.indices {
            guard case .consumer(let consumer, let request) = subscriptions.entries[index].consumer, request.followsStatus
            else { continue }
            notifications.add(.headingSilence(silent), for: subscriptions.ids[index], to: consumer)
        }
        return notifications
    }

    // MARK: Observers

    /// Registers an observer; returns its id.
    mutating func addObserver(_ observer: @escaping Observer) -> Int {
        defer { nextID += 1 }
        observers[nextID] = observer
        return nextID
    }

    mutating func removeObserver(_ id: Int) {
        observers.removeValue(forKey: id)
    }

    /// The observers to tell of an event, with their ids; `only` that one, if given.
    func observers(only id: Int? = nil) -> [(id: Int, observer: Observer)] {
        if let id { return observers[id].map { [(id, $0)] } ?? [] }
        return observers.map { ($0.key, $0.value) }
    }
}

/// A receiver's epoch that a once-per-epoch stream holds back, and the last it passed on.
struct HeldEpoch {
    var pending: Location?
    var passed: Date?

    /// Holds `location`, the newest record of its epoch; returns the record of the epoch before, now over, to
    /// pass on. A record of the epoch passed on last (a GST after a flush) is not held again.
    mutating func hold(_ location: Location) -> Location? {
        if location.timestamp == passed { return nil }
        var over: Location?
        if let previous = pending, previous.timestamp != location.timestamp {
            passed = previous.timestamp
            over = previous
        }
        pending = location
        return over
    }

    /// The epoch held is over: returns its record, to pass on.
    mutating func pass() -> Location? {
        guard let held = pending else { return nil }
        pending = nil
        passed = held.timestamp
        return held
    }
}

/// A stream's held epochs, by receiver (device path, "" for none): a few at most, in an array searched one by one
/// and changed in place (a dictionary's modify accessor allocates its coroutine's frame on every fix).
struct HeldEpochs {
    private var epochs: [(device: String, epoch: HeldEpoch)] = []

    /// The receivers with an epoch here.
    var devices: [String] { epochs.map(\.device) }

    /// The record of `device`'s epoch not yet over, if any.
    func pending(of device: String) -> Location? {
        epochs.first { $0.device == device }?.epoch.pending
    }

    /// ``HeldEpoch/hold(_:)`` for `device`'s epoch.
    mutating func hold(_ location: Location, of device: String) -> Location? {
        if let index = epochs.firstIndex(where: { $0.device == device }) { return epochs[index].epoch.hold(location) }
        epochs.append((device, HeldEpoch(pending: location, passed: nil)))
        return nil
    }

    /// ``HeldEpoch/pass()`` for `device`'s epoch.
    mutating func pass(_ device: String) -> Location? {
        guard let index = epochs.firstIndex(where: { $0.device == device }) else { return nil }
        return epochs[index].epoch.pass()
    }

    mutating func forget(_ device: String) {
        epochs.removeAll { $0.device == device }
    }
}

/// One live subscription, as the state machine keeps it.
struct Subscription {
    enum Consumer {
        /// The delegate: the manager's ``LocationManager/desiredAccuracy`` and
        /// ``LocationManager/distanceFilter`` apply, and fixes go through the delegate queue.
        case delegate
        case consumer(any SubscriptionConsumer, SubscriptionRequest)
    }

    var consumer: Consumer
    var isOneShot: Bool
    /// Whether it takes headings instead of fixes: the delegate's (``SubscriptionID/delegateHeadings``) or a
    /// consumer's (``SubscriptionRequest/headings(filter:)``).
    var takesHeadings = false
    /// For a one-shot request: whether the watch had reached gpsd when it subscribed (a session of it had
    /// connected), or a session has connected since. One that did not fails with the first attempt that fails (at
    /// once if one had); the others wait out every failure that may pass until their timeout, whose error names
    /// the status then.
    var sawConnection = false
    /// The last fix delivered, for the distance filter.
    var lastDelivered: Location?
    /// The last heading delivered, for the heading filter.
    var lastHeading: Heading?
    /// The best fix that did not qualify, for a one-shot's failure.
    var best: Location?
    /// For a one-shot with a maximum age: the newest fix gpsd held that was too old, or of unknown age.
    var refusedHeldFix: Location?
    /// For a stream that takes each epoch once: by receiver (device), the newest record of its epoch not yet
    /// over, and the epoch it passed on last.
    var heldEpochs = HeldEpochs()
    /// For a continuous subscription with a desired accuracy: since when every fix fell short of it and when the
    /// last did (monotonic time), the best of them, and whether its consumer was told.
    var rejecting: (since: Duration, last: Duration, best: Location, told: Bool)?

    /// Whether it takes each epoch once, when the epoch is over (``EpochDelivery/oncePerEpoch``).
    var takesCompleteEpochs: Bool {
        if case .consumer(_, let request) = consumer { return !request.isOneShot && request.delivery == .oncePerEpoch }
        return false
    }

    /// Whether it is a request waiting for gpsd's held fix (a one-shot with a maximum age).
    var wantsHeldFix: Bool {
        if case .consumer(_, let request) = consumer { return request.isOneShot && request.maximumAge != nil }
        return false
    }

    /// Whether a fix from a POLL reply (gpsd's held fix, `age` old, `nil` if that is unknown) may go to this
    /// subscription: streams carry the receiver's live fixes only; a one-shot request takes a held fix its
    /// `maximumAge` allows, if its age is known; the delegate takes the newest fix there is.
    func takesHeldFix(aged age: Duration?) -> Bool {
        switch consumer {
        case .delegate: return true
        case .consumer(_, let request):
            guard request.isOneShot, let maximumAge = request.maximumAge, let age else { return false }
            return age <= maximumAge
        }
    }
}

/// The table's subscriptions, in the order they subscribed: kept in place in an array, so that a fix's way reads
/// and changes each where it is (a dictionary's values are copied out whole to be read, and a subscription holds
/// fixes and epochs), and found by id one by one (cheaper than hashing for the few a manager has).
///
/// A subscription is read and changed through ``entries`` directly (`subscriptions.entries[index].lastDelivered`):
/// an array's element is reached by address, where an accessor of this type's own would be a coroutine whose frame
/// is allocated for every access. Only this type adds and removes entries, keeping ``ids`` beside them.
struct SubscriptionList: Sequence {
    private(set) var ids: [SubscriptionID] = []
    /// The subscriptions, in the order of ``ids``.
    var entries: [Subscription] = []

    var isEmpty: Bool { ids.isEmpty }
    var count: Int { ids.count }

    /// The position of subscription `id`, if it is here.
    func index(forKey id: SubscriptionID) -> Int? {
        ids.firstIndex(of: id)
    }

    /// Subscription `id`; setting `nil` removes it, setting another adds or replaces it.
    subscript(id: SubscriptionID) -> Subscription? {
        get { index(forKey: id).map { entries[$0] } }
        set {
            switch (index(forKey: id), newValue) {
            case (let index?, let subscription?): entries[index] = subscription
            case (let index?, nil): remove(at: index)
            case (nil, let subscription?):
                ids.append(id)
                entries.append(subscription)
            case (nil, nil): break
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey id: SubscriptionID) -> Subscription? {
        guard let index = index(forKey: id) else { return nil }
        return remove(at: index)
    }

    @discardableResult
    mutating func remove(at index: Int) -> Subscription {
        ids.remove(at: index)
        return entries.remove(at: index)
    }

    mutating func removeAll() {
        ids.removeAll()
        entries.removeAll()
    }

    func contains(where predicate: (Subscription) -> Bool) -> Bool {
        entries.contains(where: predicate)
    }

    func makeIterator() -> some IteratorProtocol<(key: SubscriptionID, value: Subscription)> {
        zip(ids, entries).lazy.map { (key: $0, value: $1) }.makeIterator()
    }
}
