public import Dispatch
public import Foundation

/// Delivers fixes from gpsd, or from a recording, to a delegate: the CoreLocation model on Linux.
///
/// ```swift
/// let manager = LocationManager()                      // gpsd on localhost:2947
/// manager.delegate = printer                           // a LocationManagerDelegate
/// manager.desiredAccuracy = 10                         // metres
/// manager.startUpdatingLocation()
/// ```
///
/// The manager reads gpsd on a thread of its own and calls the delegate on ``delegateQueue``: by default one
/// serial queue per manager, so callbacks never overlap and arrive in order. It connects when something wants
/// fixes (``startUpdatingLocation()``, ``requestLocation()``, or an ``AsyncLocationManager`` caller) and
/// disconnects when nothing does; when it is released, its thread has ended.
///
/// gpsd sends several reports per receiver cycle; the manager passes on each cycle's fix once, and again only
/// when a later report of the same cycle adds a value (the altitude, say), so two equal locations never
/// follow each other.
public final class LocationManager: Sendable {
    /// How long ``requestLocation()`` waits for a fix unless told otherwise: 30 seconds, enough for a warm
    /// receiver to get its first fix.
    public static let defaultRequestTimeout: Duration = .seconds(30)

    /// The queue the delegate is called on.
    public let delegateQueue: DispatchQueue
    /// Where fixes come from: the gpsd server, or `nil` for a recording.
    public let server: GPSDServer?

    private let source: any LocationSource
    private let clock: any ManagerClock
    private let state: Locked<State>

    private struct State {
        var machine: LocationManagerStateMachine
        weak var delegate: (any LocationManagerDelegate)?
        /// Delegate calls decided and not yet made, in the order they were decided.
        var outbox = DelegateOutbox()
        /// The delegate callbacks running now: on which thread, of which generation.
        var callbacks: [(thread: UInt, generation: Int)] = []

        /// Runs the state machine, and queues its delegate calls in the order it decided them.
        mutating func decide(_ body: (inout LocationManagerStateMachine) -> [LocationManagerStateMachine.Action])
            -> [LocationManagerStateMachine.Action]
        {
            let actions = body(&machine)
            outbox.queue(actions)
            return actions
        }
    }

    /// A manager for a live gpsd.
    ///
    /// Nothing connects until fixes are wanted.
    /// - Parameters:
    ///   - server: where gpsd listens, and optionally which receiver to watch.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    public convenience init(server: GPSDServer = .default, delegateQueue: DispatchQueue? = nil) {
        self.init(source: GPSDSessionSource(server: server), server: server, delegateQueue: delegateQueue)
    }

    /// A manager that replays a recording: gpsd JSON reports, one per line, as `gpspipe -w` writes them.
    ///
    /// Lines that are not gpsd reports are skipped and counted in ``skippedLineCount``. A file that cannot be
    /// read, or holds no reports, fails with ``LocationError/Code/invalidRecording``.
    ///
    /// ```swift
    /// let manager = LocationManager(recording: URL(filePath: "drive.gpsd.json"), pace: .accelerated(by: 10))
    /// ```
    /// - Parameters:
    ///   - recording: the file.
    ///   - pace: how fast to replay: as recorded (the default), faster, or as fast as possible.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    public convenience init(recording: URL, pace: ReplayPace = .realTime, delegateQueue: DispatchQueue? = nil) {
        self.init(source: RecordingSource(url: recording, pace: pace), server: nil, delegateQueue: delegateQueue)
    }

    /// A manager on any source, with an injectable clock: for tests.
    package init(
        source: any LocationSource,
        server: GPSDServer? = nil,
        clock: any ManagerClock = SystemManagerClock(),
        delegateQueue: DispatchQueue? = nil
    ) {
        self.source = source
        self.server = server
        self.clock = clock
        self.delegateQueue = delegateQueue ?? DispatchQueue(label: "GPSDLocation.LocationManager.delegate")
        self.state = Locked(State(machine: LocationManagerStateMachine(requestTimeout: Self.defaultRequestTimeout)))
    }

    deinit {
        // Nothing else can act now: a session being opened or closed would hold a reference to the manager.
        if case .open(_, let session) = state.withLock({ $0.machine.source }) { session.close() }
    }

    // MARK: Configuration

    /// Receives fixes and errors. Held weakly.
    public var delegate: (any LocationManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The horizontal accuracy, in metres, a fix must have to be delivered; `nil` (the default) takes any.
    ///
    /// A fix whose accuracy gpsd does not know does not meet a desired accuracy.
    public var desiredAccuracy: Double? {
        get { state.withLock { $0.machine.desiredAccuracy } }
        set { state.withLock { $0.machine.desiredAccuracy = newValue } }
    }

    /// How far, in metres, the receiver must move from the last delivered fix before continuous updates
    /// deliver another; `nil` (the default) delivers every cycle.
    public var distanceFilter: Double? {
        get { state.withLock { $0.machine.distanceFilter } }
        set { state.withLock { $0.machine.distanceFilter = newValue } }
    }

    /// How long ``requestLocation()`` waits before failing with ``LocationError/Code/locationUnknown``.
    /// Defaults to ``defaultRequestTimeout``.
    public var requestTimeout: Duration {
        get { state.withLock { $0.machine.requestTimeout } }
        set { state.withLock { $0.machine.requestTimeout = newValue } }
    }

    /// The newest fix the manager has received, whatever the filters; `nil` before the first.
    public var location: Location? { state.withLock { $0.machine.latest?.location } }

    /// The satellites the receiver last reported seeing and using.
    public var satellites: SatelliteCount? { state.withLock { $0.machine.satellites } }

    /// How many lines were not gpsd reports (garbage, truncated or over-long lines) and were skipped.
    public var skippedLineCount: Int { state.withLock { $0.machine.skippedLines } }

    // MARK: Requests

    /// Delivers one fix: the first that meets ``desiredAccuracy``, in one
    /// ``LocationManagerDelegate/locationManager(_:didUpdateLocations:)`` call; or one
    /// ``LocationManagerDelegate/locationManager(_:didFailWithError:)`` with
    /// ``LocationError/Code/locationUnknown`` after ``requestTimeout``. Then stops, unless continuous updates
    /// are on. A second call while one is pending replaces it.
    public func requestLocation() {
        perform(state.withLock { $0.decide { $0.requestLocation() } })
    }

    /// Delivers every receiver cycle's fix that passes ``desiredAccuracy`` and ``distanceFilter``, until
    /// ``stopUpdatingLocation()``. A failure of the connection is reported to the delegate and ends updates.
    public func startUpdatingLocation() {
        perform(state.withLock { $0.decide { $0.startUpdating() } })
    }

    /// Stops continuous updates and any pending ``requestLocation()``.
    ///
    /// When it returns, no callback decided before it begins any more, and one that was running on another
    /// thread has returned. (Updates started again, by another thread or a callback, call the delegate again.)
    /// Called from inside a callback, it waits for no callback: the others may be waiting for this one. Safe
    /// from any queue, the ``delegateQueue``'s target included; do not call it while holding a lock that a
    /// callback running on another thread waits for.
    public func stopUpdatingLocation() {
        let thread = SystemThread.currentID
        let (actions, generation, insideCallback) = state.withLock { state in
            (state.decide { $0.stopUpdating() }, state.machine.generation, state.callbacks.contains { $0.thread == thread })
        }
        perform(actions)
        guard !insideCallback else { return }
        state.withLock(when: { $0.callbacks.allSatisfy { $0.generation >= generation } }) { _ in }
    }

    // MARK: Subscriptions (the async bridge)

    /// An id to subscribe with. Giving it back with ``unsubscribe(_:)`` before ``subscribe(_:_:handler:)``
    /// means the subscription never happens.
    package func reserveSubscription() -> SubscriptionID {
        state.withLock { $0.machine.reserve() }
    }

    /// Starts a subscription under a reserved id: the source runs until it is given back or the manager ends
    /// it, which it tells `consumer` (``SubscriptionEvent/ended(_:)``). Returns false if the id was given back
    /// first.
    @discardableResult
    package func subscribe(_ id: SubscriptionID, _ request: SubscriptionRequest, consumer: any SubscriptionConsumer) -> Bool {
        guard let actions = state.withLock({ $0.machine.subscribe(id, request, consumer) }) else { return false }
        perform(actions)
        return true
    }

    /// ``subscribe(_:_:consumer:)`` with a consumer of its own that calls `handler` for each event.
    @discardableResult
    package func subscribe(
        _ id: SubscriptionID, _ request: SubscriptionRequest, handler: @escaping @Sendable (SubscriptionEvent) -> Void
    ) -> Bool {
        subscribe(id, request, consumer: HandlerConsumer(handler))
    }

    /// Gives a subscription (or a reservation) back. Returns what the subscription had seen if it was still
    /// live; `nil` if the manager had ended it already (and told its handler so, or is about to).
    @discardableResult
    package func unsubscribe(_ id: SubscriptionID) -> EndedSubscription? {
        guard let (ended, actions) = state.withLock({ $0.machine.unsubscribe(id) }) else { return nil }
        perform(actions)
        return ended
    }

    /// Registers an observer told of satellite counts, synchronously on the source's thread, never under the
    /// manager's lock. Observing does not open a session.
    package func addObserver(_ observer: @escaping @Sendable (ManagerEvent) -> Void) -> Int {
        state.withLock { $0.machine.addObserver(observer) }
    }

    package func removeObserver(_ id: Int) {
        state.withLock { $0.machine.removeObserver(id) }
    }

    /// The newest fix and how long ago it was current.
    package var latestFix: (location: Location, age: Duration)? {
        let now = clock.now
        return state.withLock { state in state.machine.latest.map { ($0.location, now - $0.at) } }
    }

    // MARK: Acting

    /// Carries out what the state machine decided, in order, outside the lock. Opening and closing a session
    /// report back, and what the machine decides then is carried out next, on this thread.
    private func perform(_ actions: [LocationManagerStateMachine.Action]) {
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .openSession(let number):
                do {
                    let session = try source.openSession { [weak self] event in self?.receive(event, session: number) }
                    pending += state.withLock { $0.decide { $0.sessionOpened(number, session) } }
                } catch {
                    pending += state.withLock { $0.decide { $0.sessionFailedToOpen(number, error) } }
                }
            case .closeSession(let number, let session):
                session.close()
                pending += state.withLock { $0.decide { $0.sessionClosed(number) } }
            case .requestHeldFix(let session):
                session.requestHeldFix()
            case .deliver, .fail:
                // Queued in the outbox, in the order decided: each block makes the oldest call still there.
                delegateQueue.async { [weak self] in self?.callDelegate() }
            case .notify(let consumer, let events):
                consumer.receive(events)
            case .observe(let observers, let event):
                for observer in observers { observer(event) }
            case .scheduleRequestTimeout(let request, let delay):
                clock.schedule(after: delay) { [weak self] in
                    guard let self else { return }
                    self.perform(self.state.withLock { $0.decide { $0.requestTimedOut(request) } })
                }
            }
        }
    }

    private func receive(_ event: SourceEvent, session: Int) {
        let now = clock.now
        perform(state.withLock { $0.decide { $0.handle(event, session: session, now: now) } })
    }

    /// Makes the oldest delegate call decided and not yet made, unless a stop came after it was decided; while
    /// it runs, ``stopUpdatingLocation()`` on another thread waits for it.
    private func callDelegate() {
        let thread = SystemThread.currentID
        let call = state.withLock { state -> (any LocationManagerDelegate, DelegateOutbox.Call, Int)? in
            guard let (call, generation) = state.outbox.next(), state.machine.generation == generation,
                  let delegate = state.delegate else { return nil }
            state.callbacks.append((thread, generation))
            return (delegate, call, generation)
        }
        guard let (delegate, made, generation) = call else { return }
        switch made {
        case .locations(let locations): delegate.locationManager(self, didUpdateLocations: locations)
        case .failure(let error): delegate.locationManager(self, didFailWithError: error)
        }
        state.withLock { state in
            if let index = state.callbacks.lastIndex(where: { $0.thread == thread && $0.generation == generation }) {
                state.callbacks.remove(at: index)
            }
        }
    }
}
