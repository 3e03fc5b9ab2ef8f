import GPSDCore
import GPSDSystem

/// Watches circular regions and tells when the receiver enters or leaves them: CoreLocation's `CLMonitor`, for
/// ``GeofenceRegion``s, fed with ``Location``s.
///
/// Add regions, feed fixes (``monitor(_:)`` takes them from a sequence such as
/// ``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``; ``process(_:)`` takes one),
/// and follow the events (``events(bufferingPolicy:)``, ``delegate``, or what ``process(_:)`` returns):
///
/// ```swift
/// let gps = AsyncLocationManager()
/// let monitor = GeofenceMonitor(hysteresis: 10, maximumAccuracy: 30)
/// monitor.add(try GeofenceRegion(identifier: "home", center: .init(latitude: 52.5163, longitude: 13.3777),
///                                radius: 100))
/// Task { try await monitor.monitor(gps.updates()) }
/// for await event in monitor.events() where !event.isInitial {
///     print(event.state == .inside ? "entered" : "left", event.identifier)
/// }
/// ```
///
/// ## The decision rule
///
/// Each fix is a circle: its coordinate, and around it its ``Location/horizontalAccuracy`` (gpsd's `eph`, about
/// 95 % confidence). For a region of radius `r`, at distance `d` of the fix from the region's centre, with
/// accuracy `a` and ``hysteresis`` `h`:
///
/// ```
/// centre                     r - h/2          r          r + h/2
/// ●─────────────────────────────┼─────────────┼─────────────┼───────────▶ d
/// ◀───────── inside ──────────▶ ◀──── decides nothing ────▶ ◀── outside ──
///  d + a ≤ r - h/2                                           d - a ≥ r + h/2
/// ```
///
/// - The fix decides **inside** when its whole accuracy circle lies within `r - h/2`, **outside** when its whole
///   accuracy circle lies beyond `r + h/2`, and **nothing** for that region otherwise: a fix near the border, or
///   one whose accuracy circle straddles the band, leaves the region's state as it was. So a receiver jittering
///   across the border by less than the band (`h` plus twice its accuracy) raises no events, and the state
///   changes only when a fix is decidedly on the other side.
/// - A fix whose ``Location/horizontalAccuracy`` is above ``maximumAccuracy`` decides nothing for any region, nor
///   does one that cannot be true (a coordinate off the Earth, an accuracy below 0 or not a number).
/// - A fix without a ``Location/horizontalAccuracy`` (gpsd sends `eph` when the receiver reports a DOP, so this
///   is rare) is taken to be as inaccurate as ``maximumAccuracy`` allows: it can decide only well inside or well
///   outside a region. With ``maximumAccuracy`` infinite, such a fix decides nothing.
/// - A region whose radius is not above `h/2` plus the fixes' accuracy can never be entered.
///
/// A region's first decision (leaving ``GeofenceState/unknown``) is reported at once. A change between inside
/// and outside must last: it is reported with the first fix deciding the new state at least ``minimumDwell`` (on
/// the monitor's clock) after the first fix that decided it; a fix deciding the old state in between cancels it,
/// fixes that decide nothing neither confirm nor cancel it. There is no timer: with no further fix, nothing is
/// reported. An event comes only when the reported state changes, never twice for the same state.
///
/// ## Threads
///
/// Every method may be called from any thread, at any time, also while ``monitor(_:)`` runs: regions can be
/// added and removed while fixes flow. Events are decided under the monitor's lock and delivered (to the event
/// sequences, then to the delegate) after it is released, one at a time, in the order they were decided.
///
/// `C` is the clock that times ``minimumDwell`` and stamps ``GeofenceEvent/instant``: `ContinuousClock` with
/// ``init(hysteresis:maximumAccuracy:minimumDwell:)``, a manual one in tests.
public final class GeofenceMonitor<C: Clock>: Sendable where C.Duration == Duration {
    /// The events of this monitor: they carry instants of its clock.
    public typealias Event = GeofenceEvent<C.Instant>

    /// The clock that times ``minimumDwell`` and stamps events.
    public let clock: C
    /// The width in metres of the band around each region's border where no fix decides anything: half inside
    /// the radius, half beyond it.
    public let hysteresis: Double
    /// The largest ``Location/horizontalAccuracy`` in metres of a fix that decides anything; a fix without an
    /// accuracy is taken to have this one.
    public let maximumAccuracy: Double
    /// How long a change between inside and outside must be confirmed by fixes before it is reported.
    public let minimumDwell: Duration

    typealias Subscriber = (id: Int, continuation: AsyncStream<Event>.Continuation)

    /// Something decided under the lock, to be done after it: to the subscribers of the time it was decided.
    enum Delivery {
        case event(Event, to: [Subscriber])
        case finish([Subscriber])
    }

    struct WeakDelegate {
        weak var value: (any GeofenceMonitorDelegate<C>)?
    }

    struct State {
        var machine: GeofenceStateMachine<C.Instant>
        var subscribers: [Subscriber] = []
        var nextSubscriberID = 0
        var delegate = WeakDelegate()
        /// Deliveries decided and not yet made, oldest first, made by the thread that claimed them.
        var outbox = DeliveryQueue<Delivery>()
        var isFinished = false
    }

    let state: Locked<State>

    /// A monitor timed by `clock`, with no regions.
    ///
    /// ```swift
    /// let monitor = GeofenceMonitor(clock: SuspendingClock(), hysteresis: 20, minimumDwell: .seconds(30))
    /// ```
    /// - Parameters:
    ///   - clock: times ``minimumDwell`` and stamps events.
    ///   - hysteresis: metres, finite and at least 0: the band around each border where fixes decide nothing.
    ///   - maximumAccuracy: metres, above 0 (infinite to accept any): less accurate fixes decide nothing.
    ///   - minimumDwell: at least zero: how long a change must be confirmed before it is reported.
    /// - Precondition: the values are in the ranges above.
    public init(clock: C, hysteresis: Double = 10, maximumAccuracy: Double = 50, minimumDwell: Duration = .zero) {
        precondition(hysteresis.isFinite && hysteresis >= 0, "hysteresis must be finite and at least 0 metres")
        precondition(maximumAccuracy > 0, "maximumAccuracy must be above 0 metres")
        precondition(minimumDwell >= .zero, "minimumDwell must not be negative")
        self.clock = clock
        self.hysteresis = hysteresis
        self.maximumAccuracy = maximumAccuracy
        self.minimumDwell = minimumDwell
        let rule = GeofenceRule(hysteresis: hysteresis, maximumAccuracy: maximumAccuracy)
        state = Locked(State(machine: GeofenceStateMachine(rule: rule, minimumDwell: minimumDwell)))
    }

    deinit {
        // Nobody is delivering (a delivering thread holds the monitor), so the outbox is empty.
        let subscribers = state.withLock { $0.subscribers }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    /// The regions watched, in the order they were added.
    public var regions: [GeofenceRegion] { state.withLock { $0.machine.regions } }

    /// The region's state as last reported; `nil` if no region has that identifier.
    ///
    /// ```swift
    /// if monitor.state(of: "home") == .outside { lights.off() }
    /// ```
    public func state(of identifier: String) -> GeofenceState? {
        state.withLock { $0.machine.state(of: identifier) }
    }

    /// Hears of events after they are decided; held weakly. See ``GeofenceMonitorDelegate``.
    public var delegate: (any GeofenceMonitorDelegate<C>)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// Starts watching a region, and reports its initial state.
    ///
    /// The initial state is what the last fix seen (however old) decides for the region, or
    /// ``GeofenceState/unknown`` if there was none or it decides nothing; the event
    /// (``GeofenceEvent/isInitial``) is delivered like any other (nothing is, after ``finish()``). A region with the
    /// identifier of one already watched replaces it, in its place: the old region's state and any change it had
    /// pending are forgotten, and the new one reports its own initial state.
    ///
    /// ```swift
    /// let initial = monitor.add(try GeofenceRegion(identifier: "depot", center: depot, radius: 250))
    /// print(initial.state)   // unknown, inside or outside
    /// ```
    /// - Returns: the region's initial event.
    @discardableResult
    public func add(_ region: GeofenceRegion) -> Event {
        decide { state in
            let event = state.machine.add(region, at: clock.now)
            return (event, [event])
        }
    }

    /// Stops watching a region: nothing more is decided for it. Events decided before are still delivered.
    ///
    /// ```swift
    /// monitor.remove(identifier: "depot")
    /// ```
    /// - Returns: whether a region had that identifier.
    @discardableResult
    public func remove(identifier: String) -> Bool {
        state.withLock { $0.machine.remove(identifier) }
    }

    /// Takes one fix, and reports the changes it decides (see the decision rule above).
    ///
    /// The events are delivered before this returns, unless another thread was delivering at the time (or this
    /// is called from the delegate): that one delivers them, after the earlier ones. After ``finish()``, fixes are
    /// ignored.
    ///
    /// ```swift
    /// for event in monitor.process(fix) { print(event) }
    /// ```
    /// - Returns: the events the fix caused, in the order the regions were added; none for most fixes.
    @discardableResult
    public func process(_ location: Location) -> [Event] {
        decide { state in
            guard !state.isFinished else { return ([], []) }
            let events = state.machine.process(location, at: clock.now)
            return (events, events)
        }
    }

    /// Runs `body` under the lock, queues the events it returns for the subscribers of now, and then, unless
    /// another thread is at it, delivers what is queued. The clock is read under the lock too, so instants follow
    /// the order of decisions.
    private func decide<Result>(_ body: (inout State) -> (Result, [Event])) -> Result {
        let (result, deliverHere) = state.withLock { state -> (Result, Bool) in
            let (result, events) = body(&state)
            if !state.isFinished {
                for event in events { state.outbox.append(.event(event, to: state.subscribers)) }
            }
            return (result, state.outbox.claim())
        }
        if deliverHere { deliver() }
        return result
    }

    /// Makes the queued deliveries, batch by batch, with the lock released, until none is left.
    func deliver() {
        while let (batch, delegate) = state.withLock({ state in state.outbox.takeAll().map { ($0, state.delegate.value) } }) {
            for delivery in batch {
                switch delivery {
                case .event(let event, let subscribers):
                    for subscriber in subscribers { subscriber.continuation.yield(event) }
                    delegate?.geofenceMonitor(self, didChange: event)
                case .finish(let subscribers):
                    for subscriber in subscribers { subscriber.continuation.finish() }
                }
            }
        }
    }
}

extension GeofenceMonitor where C == ContinuousClock {
    /// A monitor timed by the continuous clock, with no regions.
    ///
    /// ```swift
    /// let monitor = GeofenceMonitor(maximumAccuracy: 25, minimumDwell: .seconds(10))
    /// ```
    /// - Parameters:
    ///   - hysteresis: metres, finite and at least 0: the band around each border where fixes decide nothing.
    ///   - maximumAccuracy: metres, above 0 (infinite to accept any): less accurate fixes decide nothing.
    ///   - minimumDwell: at least zero: how long a change must be confirmed before it is reported.
    /// - Precondition: the values are in the ranges above.
    public convenience init(hysteresis: Double = 10, maximumAccuracy: Double = 50, minimumDwell: Duration = .zero) {
        self.init(
            clock: ContinuousClock(), hysteresis: hysteresis, maximumAccuracy: maximumAccuracy,
            minimumDwell: minimumDwell)
    }
}
