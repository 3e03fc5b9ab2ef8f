/// One step of a live timeline (``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``):
/// the newest fix with the conditions it stands in, as `CLLocationUpdate` has them. A timeline makes one for each
/// fix that passes its filters and for each change of the manager's status, in the order the manager decided them,
/// so a robot's whole loop is one `for try await`:
///
/// ```swift
/// for try await update in gps.liveUpdates(desiredAccuracy: 10) {
///     if update.sourceRestarted { planner.reset() }
///     guard let fix = update.location, !update.isStale, let age = fix.age, age < .seconds(1) else {
///         robot.hold(); continue
///     }
///     robot.steer(towards: fix.coordinate, slowly: update.isStationary)
/// }
/// ```
public struct LocationUpdate: Sendable, Hashable {
    /// The newest fix that passed the timeline's filters, `nil` until one has; an update of a changed condition
    /// carries the last one (see ``isStale``). Its ``Location/age`` says how long ago the receiver measured it.
    public var location: Location?
    /// Whether this update brings the first fix of a receiver epoch: true once an epoch. Else a condition changed,
    /// or a later report of the epoch completed it (gpsd sends a report per sentence of the receiver's cycle, the
    /// GGA adding the altitude to the RMC's fix, say): ``location`` is then that epoch's more complete record, its
    /// time unchanged.
    public var isNewFix: Bool
    /// The manager's status when the update was made.
    public var status: LocationStatus
    /// No fixes are coming: the status is anything but ``LocationStatus/fix(_:_:)`` (connecting, no receiver,
    /// waiting for a fix, fix lost, receiver gone, silent, reconnecting, stopped).
    public var locationUnavailable: Bool
    /// The ``location`` carried is not a current fix: no fixes are coming (``locationUnavailable``), or they are but
    /// the timeline's desired accuracy has rejected every one for the manager's stale timeout (``rejection``).
    public var isStale: Bool
    /// The receiver is judged at rest: its speeds low and its positions within their own accuracy of each other
    /// for a while, with hysteresis, so jitter at rest does not make it move and a start is seen within seconds.
    /// ``StationaryDetector`` states the rule and its defaults; the manager's `stationaryDetection` sets them.
    public var isStationary: Bool
    /// The source restarted just before this update: a new session connected after an earlier one had (gpsd was
    /// restarted, the connection dropped and was made again, or a replay began again). What was known of the
    /// receiver before may not hold.
    public var sourceRestarted: Bool
    /// Fixes keep coming but none has met the desired accuracy for the manager's stale timeout: the best seen, for
    /// how long. `nil` once a fix passes.
    public var rejection: FixRejection?
    /// The newest heading gpsd reported (from a compass, a gyro or a second antenna: ``Heading``), whatever the
    /// timeline's filters; `nil` until one came. A heading alone makes no update: the next update carries it, and
    /// one is made when headings start, stop (``isHeadingStale``) or start again.
    public var heading: Heading?
    /// The ``heading`` carried is not a current one: no heading came for the manager's stale timeout
    /// (``LocationManager/staleTimeout``), or the session or the receiver that sent it is not reporting (the status
    /// is connecting, no receiver, receiver gone, silent, reconnecting or stopped). `false` without a heading.
    public var isHeadingStale: Bool

    public init(
        location: Location?, isNewFix: Bool, status: LocationStatus, locationUnavailable: Bool, isStale: Bool,
        isStationary: Bool, sourceRestarted: Bool, rejection: FixRejection?, heading: Heading? = nil,
        isHeadingStale: Bool = false
    ) {
        self.heading = heading
        self.isHeadingStale = isHeadingStale
        self.location = location
        self.isNewFix = isNewFix
        self.status = status
        self.locationUnavailable = locationUnavailable
        self.isStale = isStale
        self.isStationary = isStationary
        self.sourceRestarted = sourceRestarted
        self.rejection = rejection
    }
}

extension LocationUpdate: CustomStringConvertible {
    /// One line for people: `fix 3D gps, stationary: 52.5218061, 13.4133957 …`, `fix lost, stale: 52.52…`.
    public var description: String {
        var conditions: [String] = []
        if isStale { conditions.append("stale") }
        if isStationary { conditions.append("stationary") }
        if sourceRestarted { conditions.append("restarted") }
        if let rejection { conditions.append(rejection.description) }
        if isHeadingStale { conditions.append("heading stale") }
        let head = ([status.description] + conditions).joined(separator: ", ")
        return location.map { head + ": \($0)" } ?? head
    }
}
