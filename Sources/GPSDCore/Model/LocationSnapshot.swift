import Glibc

/// One consistent reading of everything a control loop acts on, taken at one instant: the newest fix and heading
/// with their ages at that instant, the status, whether each is current, whether the receiver is at rest, and the
/// satellites' counts. ``LocationManager/snapshot`` reads it under the manager's lock in one step, so no value in it
/// is newer than another, without allocating and without a task hop: a 100 Hz loop polls it.
///
/// It says what the manager receives while something keeps gpsd's watch on (``LocationManager/startUpdatingLocation()``,
/// a stream of fixes or a live timeline): a snapshot alone starts nothing.
///
/// ```swift
/// gps.manager.startUpdatingLocation()
/// while running {                                   // the control tick, 10 Hz
///     let state = gps.manager.snapshot
///     if let pose = try? state.predictedLocation(at: state.instant), !state.isStale {
///         controller.track(pose.coordinate, within: pose.horizontalAccuracy)
///     } else {
///         controller.hold()
///     }
///     if let heading = state.heading, !state.isHeadingStale { controller.align(to: heading.trueHeading) }
///     try await Task.sleep(until: state.instant.advanced(by: .milliseconds(100)))
/// }
/// ```
public struct LocationSnapshot: Sendable, Hashable {
    /// The instant the snapshot was read, on the monotonic clock: the ages are at this instant.
    public var instant: ContinuousClock.Instant
    /// The newest fix, `nil` before the first (``LocationManager/location``).
    public var location: Location?
    /// How long before ``instant`` the receiver measured ``location``; `nil` when that is not established
    /// (``Location/age(at:)``).
    public var locationAge: Duration?
    /// The newest heading, `nil` before the first and from a receiver without a heading sensor
    /// (``LocationManager/heading``).
    public var heading: Heading?
    /// How long before ``instant`` the ``heading`` was measured; `nil` when that is not established
    /// (``Heading/age(at:)``).
    public var headingAge: Duration?
    /// The manager's status.
    public var status: LocationStatus
    /// The ``location`` held is not a current fix: the status is anything but ``LocationStatus/fix(_:_:)`` (the
    /// fix lost, the receiver gone, gpsd silent for the stale timeout, reconnecting, stopped, …). `false` without
    /// a location. As ``LocationUpdate/isStale``, without a timeline's accuracy filter.
    public var isStale: Bool
    /// The ``heading`` held is not a current one: none arrived for the manager's stale timeout, it was measured
    /// that long ago or more (``headingAge``: a heading with a time of its own that gpsd held), or the session or
    /// receiver is not reporting. `false` without a heading. As ``LocationUpdate/isHeadingStale``, which does not
    /// look at the age.
    public var isHeadingStale: Bool
    /// The receiver is judged at rest, by every live fix the manager received (not gpsd's held fix), by the rule and
    /// configuration a live timeline uses (``LocationUpdate/isStationary``, ``LocationManager/stationaryDetection``).
    public var isStationary: Bool
    /// The satellites seen and used, from the newest sky; `nil` before one, and after the receiver went.
    public var satellites: SatelliteCount?
    /// How many sessions with gpsd have connected: a poller that sees it change knows the source (re)started
    /// between two snapshots (gpsd restarted, the connection dropped and was made again, a replay began again),
    /// as a live timeline's ``LocationUpdate/sourceRestarted`` says.
    public var connections: Int

    public init(
        instant: ContinuousClock.Instant, location: Location? = nil, locationAge: Duration? = nil,
        heading: Heading? = nil, headingAge: Duration? = nil, status: LocationStatus = .stopped,
        isStale: Bool = false, isHeadingStale: Bool = false, isStationary: Bool = false,
        satellites: SatelliteCount? = nil, connections: Int = 0
    ) {
        self.connections = connections
        self.instant = instant
        self.location = location
        self.locationAge = locationAge
        self.heading = heading
        self.headingAge = headingAge
        self.status = status
        self.isStale = isStale
        self.isHeadingStale = isHeadingStale
        self.isStationary = isStationary
        self.satellites = satellites
    }
}

extension LocationSnapshot {
    /// How far ahead of its fix a position is predicted by default: 2 s, two epochs of a 1 Hz receiver. Beyond
    /// it, constant velocity is a guess: a vehicle brakes or turns in that time.
    public static let defaultPredictionHorizon: Duration = .seconds(2)
    /// The acceleration the prediction allows for by default, in m/s²: a car braking or turning gently, a
    /// ground robot at full torque (about 0.2 g).
    public static let defaultManoeuvreAcceleration = 2.0

    /// Why a position cannot be predicted.
    public enum PredictionError: Error, Sendable, Hashable {
        /// No fix yet.
        case noLocation
        /// The fix's age is not established (``Location/age``), so the time to predict over is not known.
        case ageUnknown
        /// The fix moves but has no course, or has no speed: its velocity is not known.
        case velocityUnknown
        /// The instant is before the fix was measured, by this much: the fix itself is the best there is.
        case beforeFix(Duration)
        /// The instant is this far past the fix, beyond the horizon allowed.
        case beyondHorizon(elapsed: Duration, horizon: Duration)
    }

    /// The position predicted for `instant` (a control tick between two fixes, say): the newest fix moved at its
    /// own velocity (``Location/speed`` along ``Location/course``) for the time from its measurement to `instant`,
    /// with an uncertainty that grows with that time. At rest (``isStationary``) the position stays.
    ///
    /// The uncertainty, in metres at the fix's confidence, is the fix's own (``Location/horizontalAccuracy``), plus
    /// the velocity's error over the time elapsed *t* (along the track the speed's error, ``Location/speedAccuracy``,
    /// or when not known 10 % of the speed or 0.5 m/s, whichever is larger; across it the speed times the sine of the
    /// course's error, ``Location/courseAccuracy``, or 10° when not known), plus ½·`manoeuvreAcceleration`·*t²* for
    /// a vehicle that brakes or turns meanwhile. `nil` if the fix has no accuracy.
    ///
    /// Refused (``PredictionError``) without a fix, when the fix's age is not known, for a moving fix without
    /// speed or course, for an instant before the fix, and past `horizon` after it.
    ///
    /// ```swift
    /// let pose = try snapshot.predictedLocation(at: snapshot.instant.advanced(by: .milliseconds(50)))
    /// print(pose.coordinate, "±", pose.horizontalAccuracy ?? .nan, "m,", pose.elapsed, "after the fix")
    /// ```
    public func predictedLocation(
        at instant: ContinuousClock.Instant, horizon: Duration = Self.defaultPredictionHorizon,
        manoeuvreAcceleration: Double = Self.defaultManoeuvreAcceleration
    ) throws(PredictionError) -> PredictedLocation {
        guard let location else { throw .noLocation }
        guard let measured = location.arrival?.measured else { throw .ageUnknown }
        let elapsed = measured.duration(to: instant)
        guard elapsed >= .zero else { throw .beforeFix(.zero - elapsed) }
        guard elapsed <= horizon else { throw .beyondHorizon(elapsed: elapsed, horizon: horizon) }
        let t = elapsed.timeInterval
        let acceleration = manoeuvreAcceleration.isFinite ? max(0, manoeuvreAcceleration) : Self.defaultManoeuvreAcceleration
        let speed = isStationary ? 0 : location.speed
        guard let speed else { throw .velocityUnknown }
        let moving = speed >= PredictedLocation.restingSpeed
        if moving, location.course == nil { throw .velocityUnknown }
        let distance = moving ? speed * t : 0
        let coordinate = moving ? location.coordinate.destination(bearing: location.course!, distance: distance)
            : location.coordinate
        let fallback = max(0.5, 0.1 * speed)
        let alongError = (location.speedAccuracy ?? fallback) * t
        let courseError = min(location.courseAccuracy ?? (moving ? 10 : 90), 90) * .pi / 180
        let acrossError = moving ? speed * t * sin(courseError) : 0
        let growth = (alongError * alongError + acrossError * acrossError).squareRoot() + 0.5 * acceleration * t * t
        var altitude = location.altitude
        if let climb = location.climb, let base = altitude, !isStationary { altitude = base + climb * t }
        return PredictedLocation(
            coordinate: coordinate, horizontalAccuracy: location.horizontalAccuracy.map { $0 + growth },
            altitude: altitude, elapsed: elapsed, basis: location)
    }
}

/// A position predicted from a fix (``LocationSnapshot/predictedLocation(at:horizon:manoeuvreAcceleration:)``),
/// never measured: a type of its own, so that it is never taken for a ``Location``.
public struct PredictedLocation: Sendable, Hashable {
    /// Below this speed (m/s) a fix is taken as not moving: its course is noise.
    static let restingSpeed = 0.05

    /// Where the receiver is predicted to be.
    public var coordinate: Location.Coordinate
    /// The predicted position's uncertainty in metres, at the fix's confidence (about 95 %): the fix's, grown with
    /// the time elapsed; `nil` if the fix had none.
    public var horizontalAccuracy: Double?
    /// The altitude moved by the fix's climb rate, or the fix's altitude without one; `nil` without an altitude.
    public var altitude: Double?
    /// How long after the fix was measured the prediction is for.
    public var elapsed: Duration
    /// The fix it was predicted from.
    public var basis: Location

    public init(
        coordinate: Location.Coordinate, horizontalAccuracy: Double?, altitude: Double?, elapsed: Duration,
        basis: Location
    ) {
        self.coordinate = coordinate
        self.horizontalAccuracy = horizontalAccuracy
        self.altitude = altitude
        self.elapsed = elapsed
        self.basis = basis
    }
}
