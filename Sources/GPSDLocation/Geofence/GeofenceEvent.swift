import GPSDCore

/// A region's state as a ``GeofenceMonitor`` decided it: the region's initial state when it was added, or a change.
///
/// Every region added to a monitor gets exactly one initial event (``isInitial``), as `CLMonitor` reports an
/// initial state per condition: ``GeofenceState/unknown`` if no fix seen so far decides it, else the state that
/// fix decides. After that, an event comes only when the decided state really changes. `Instant` is the instant
/// type of the monitor's clock: `ContinuousClock.Instant` unless a clock was injected.
///
/// ```swift
/// for await event in monitor.events() {
///     switch (event.previousState, event.state) {
///     case (_, .inside) where !event.isInitial: print("entered \(event.identifier)")
///     case (.inside, .outside): print("left \(event.identifier)")
///     default: break
///     }
/// }
/// ```
public struct GeofenceEvent<Instant: InstantProtocol>: Sendable, Hashable {
    /// The ``GeofenceRegion/identifier`` of the region.
    public var identifier: String
    /// The region's state from now on.
    public var state: GeofenceState
    /// The region's state before: always ``GeofenceState/unknown`` for an initial event.
    public var previousState: GeofenceState
    /// The fix that decided ``state``; `nil` when the state is ``GeofenceState/unknown`` (no fix decided it).
    public var location: Location?
    /// When the monitor decided it, by its clock.
    public var instant: Instant
    /// Whether this is the region's initial state, reported once when it was added (or replaced), rather than a
    /// change.
    public var isInitial: Bool

    /// Makes an event; mostly for tests.
    public init(
        identifier: String, state: GeofenceState, previousState: GeofenceState, location: Location?, instant: Instant,
        isInitial: Bool
    ) {
        self.identifier = identifier
        self.state = state
        self.previousState = previousState
        self.location = location
        self.instant = instant
        self.isInitial = isInitial
    }
}

extension GeofenceEvent: CustomStringConvertible {
    /// One line for people: `home: unknown → inside (initial) at 12.0 seconds`.
    public var description: String {
        "\(identifier): \(previousState.rawValue) → \(state.rawValue)\(isInitial ? " (initial)" : "") at \(instant)"
    }
}
