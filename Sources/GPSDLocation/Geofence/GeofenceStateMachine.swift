import GPSDCore

/// The regions a ``GeofenceMonitor`` watches and their states: every input (a region added or removed, a fix) is a
/// mutating call that returns the events it decided. No locks, no clocks, no delivery: the monitor holds it under
/// its lock and passes in the time.
struct GeofenceStateMachine<Instant: InstantProtocol> where Instant.Duration == Duration {
    typealias Event = GeofenceEvent<Instant>

    /// A region and what the fixes have decided about it.
    private struct Watched {
        var region: GeofenceRegion
        /// The state last reported.
        var state: GeofenceState = .unknown
        /// A different state that fixes have decided since `since`, not yet reported because it has not yet
        /// lasted ``GeofenceStateMachine/minimumDwell``.
        var pending: (state: GeofenceState, since: Instant)?
    }

    let rule: GeofenceRule
    let minimumDwell: Duration

    private var watched: [String: Watched] = [:]
    /// The identifiers in the order their regions were added: the order of a fix's events.
    private var order: [String] = []
    /// The last fix processed, whatever it decided: a region added later starts from it.
    private(set) var lastFix: Location?

    init(rule: GeofenceRule, minimumDwell: Duration) {
        self.rule = rule
        self.minimumDwell = minimumDwell
    }

    /// The regions, in the order they were added.
    var regions: [GeofenceRegion] { order.compactMap { watched[$0]?.region } }

    /// The state last reported for the region, `nil` if there is no such region.
    func state(of identifier: String) -> GeofenceState? { watched[identifier]?.state }

    /// Starts watching `region`, in place of any region with its identifier; returns its initial event: the state
    /// the last fix decides, at once (no dwell: there is no earlier state to hold on to), or unknown.
    mutating func add(_ region: GeofenceRegion, at now: Instant) -> Event {
        if watched[region.identifier] == nil { order.append(region.identifier) }
        let decided = lastFix.flatMap { rule.decision(for: region, at: $0) }
        watched[region.identifier] = Watched(region: region, state: decided ?? .unknown)
        return Event(
            identifier: region.identifier, state: decided ?? .unknown, previousState: .unknown,
            location: decided == nil ? nil : lastFix, instant: now, isInitial: true)
    }

    /// Stops watching the region; whether there was one.
    mutating func remove(_ identifier: String) -> Bool {
        guard watched.removeValue(forKey: identifier) != nil else { return false }
        order.removeAll { $0 == identifier }
        return true
    }

    /// Takes a fix: the changes it decides, in the order the regions were added.
    ///
    /// A region leaves ``GeofenceState/unknown`` with the first fix that decides it. A change between inside and
    /// outside is reported with the first fix deciding the new state at least ``minimumDwell`` after the first
    /// fix that decided it; a fix deciding the reported state in between cancels it, and fixes that decide
    /// nothing neither confirm nor cancel it.
    mutating func process(_ fix: Location, at now: Instant) -> [Event] {
        lastFix = fix
        guard let accuracy = rule.accuracy(of: fix) else { return [] }
        var events: [Event] = []
        for identifier in order {
            guard var entry = watched[identifier],
                let decided = rule.decision(for: entry.region, at: fix.coordinate, accuracy: accuracy)
            else { continue }
            defer { watched[identifier] = entry }
            guard decided != entry.state else {
                entry.pending = nil
                continue
            }
            if entry.state != .unknown && minimumDwell > .zero {
                guard let pending = entry.pending, pending.state == decided else {
                    entry.pending = (decided, now)
                    continue
                }
                guard pending.since.duration(to: now) >= minimumDwell else { continue }
            }
            events.append(
                Event(
                    identifier: identifier, state: decided, previousState: entry.state, location: fix, instant: now,
                    isInitial: false))
            entry.state = decided
            entry.pending = nil
        }
        return events
    }
}
