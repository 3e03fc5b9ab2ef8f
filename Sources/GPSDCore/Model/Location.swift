public import FoundationEssentials

/// One position fix from a GNSS receiver, as gpsd reported it.
///
/// Values the receiver did not report are `nil`, never NaN or a sentinel. ``timestamp`` is the fix's own
/// time (the receiver's UTC), not the time the report arrived: replayed logs can carry any date, so compare
/// timestamps with each other rather than with the wall clock.
///
/// ```swift
/// let berlin = Location(coordinate: .init(latitude: 52.5163, longitude: 13.3777))
/// let paris = Location(coordinate: .init(latitude: 48.8584, longitude: 2.2945))
/// print(berlin.distance(from: paris))   // 881329.9… metres
/// ```
///
/// Its JSON form (`Codable`, and ``jsonText``) is one flat object, the same one `whereami --format json`
/// writes: see <doc:JSONSchema>.
public struct Location: Sendable, Hashable, Codable {
    /// A latitude and longitude in degrees, WGS84.
    public struct Coordinate: Sendable, Hashable, Codable {
        /// Degrees north of the equator; negative in the southern hemisphere.
        public var latitude: Double
        /// Degrees east of the prime meridian; negative in the western hemisphere.
        public var longitude: Double

        /// A coordinate from degrees: `Location.Coordinate(latitude: 52.52, longitude: 13.405)`.
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// The dimension of a fix: gpsd's `mode` 2 or 3.
    public enum Fix: String, Sendable, Hashable, Codable, CaseIterable {
        /// Latitude and longitude only (gpsd mode 2); altitude and climb are not meaningful.
        case twoDimensional = "2D"
        /// Latitude, longitude and altitude (gpsd mode 3).
        case threeDimensional = "3D"
    }

    /// How the fix was obtained, as gpsd's `status` reports it.
    ///
    /// gpsd leaves `status` at 0 for an ordinary fix; that is ``gps``.
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        /// An ordinary, autonomous GNSS fix.
        case gps
        /// Differential GNSS (SBAS, DGPS).
        case dgps
        /// RTK with fixed integer ambiguities: centimetre class.
        case rtkFixed
        /// RTK with floating ambiguities: decimetre class.
        case rtkFloat
        /// Dead reckoning only.
        case deadReckoning
        /// GNSS combined with dead reckoning.
        case gnssDeadReckoning
        /// A surveyed-in or manually entered position (time-only receivers).
        case timeOnly
        /// A simulated fix.
        case simulated
        /// A Precise Positioning Service (military P(Y) code) fix.
        case precisePositioning
    }

    /// Where the receiver is.
    public var coordinate: Coordinate
    /// Metres above mean sea level (gpsd `altMSL`); `nil` for a 2D fix.
    public var altitude: Double?
    /// Metres above the WGS84 ellipsoid (gpsd `altHAE`).
    public var ellipsoidalAltitude: Double?
    /// Estimated horizontal error in metres (gpsd `eph`, roughly 95 % confidence).
    public var horizontalAccuracy: Double?
    /// Estimated vertical error in metres (gpsd `epv`, roughly 95 % confidence).
    public var verticalAccuracy: Double?
    /// Estimated north–south error in metres (gpsd `epy`, roughly 95 % confidence).
    public var latitudeAccuracy: Double?
    /// Estimated east–west error in metres (gpsd `epx`, roughly 95 % confidence).
    public var longitudeAccuracy: Double?
    /// The receiver's own 1-sigma position errors for this epoch (gpsd's GST report), if it sends them.
    public var deviation: Deviation?
    /// Where the antenna is from its RTK base station; `nil` unless the receiver reports it (and gpsd does:
    /// 3.23 and later, libgps API 13).
    public var baseline: Baseline?
    /// Speed over ground in metres per second.
    public var speed: Double?
    /// Estimated speed error in metres per second (gpsd `eps`).
    public var speedAccuracy: Double?
    /// Course over ground in degrees clockwise from true north, 0 ..< 360.
    public var course: Double?
    /// Estimated course error in degrees (gpsd `epd`).
    public var courseAccuracy: Double?
    /// Vertical speed in metres per second, positive upwards.
    public var climb: Double?
    /// The fix's own UTC time, as the receiver reported it. Every fix a manager delivers has one: a report
    /// without a time (a receiver's first of a session, before it knows the date) is held back.
    public var timestamp: Date
    /// 2D or 3D.
    public var fix: Fix
    /// How the fix was obtained.
    public var status: Status
    /// The receiver that produced the fix (gpsd's device path), if known.
    public var device: String?
    /// When the fix reached this process, by the monotonic clock and by the wall clock; `nil` for a fix not
    /// made by a manager. Not part of what makes two fixes equal: it says when, not what.
    public var arrival: Arrival?

    /// A receiver's 1-sigma (standard deviation) position errors in metres, from its pseudorange noise
    /// statistics (NMEA GST, gpsd's `GST` report). Unlike the ~95 % estimates (``Location/horizontalAccuracy``
    /// and the like), these are the receiver's own statistics, and they come only from receivers that send them.
    public struct Deviation: Sendable, Hashable {
        /// 1-sigma error of the latitude, in metres (gpsd `lat`).
        public var latitude: Double?
        /// 1-sigma error of the longitude, in metres (gpsd `lon`).
        public var longitude: Double?
        /// 1-sigma error of the altitude, in metres (gpsd `alt`).
        public var altitude: Double?

        /// `Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9)`.
        public init(latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
        }
    }

    /// The RTK baseline: the antenna's position relative to its RTK base station, as the receiver reports it
    /// (gpsd's TPV `baseE`, `baseN`, `baseU`, `baseL`, `baseC`; u-blox's RELPOSNED, for one). Moving-base and
    /// heading setups read their heading from ``course``.
    public struct Baseline: Sendable, Hashable {
        /// East of the base station, in metres.
        public var east: Double?
        /// North of the base station, in metres.
        public var north: Double?
        /// Up from the base station, in metres.
        public var up: Double?
        /// The baseline's length, in metres.
        public var length: Double?
        /// The baseline's direction from the base station, in degrees clockwise from true north.
        public var course: Double?

        /// `Location.Baseline(east: 3.2, north: -1.1, up: 0.05, length: 3.4, course: 109)`.
        public init(east: Double? = nil, north: Double? = nil, up: Double? = nil, length: Double? = nil,
                    course: Double? = nil) {
            (self.east, self.north, self.up, self.length, self.course) = (east, north, up, length, course)
        }
    }

    /// When a fix reached this process, and how long before that the receiver measured it.
    public struct Arrival: Sendable, Hashable {
        /// When it reached this process, on the monotonic clock.
        public var instant: ContinuousClock.Instant
        /// When it reached this process, on the wall clock: for logs.
        public var date: Date
        /// How long before it reached this process the receiver measured it, as the manager estimates it (see
        /// ``Location/age``); `nil` when that cannot be established: a fix gpsd held, asked for with `?POLL;`,
        /// before any live fix of its receiver arrived, whose time gpsd's clock cannot vouch for.
        public var delay: Duration?

        public init(instant: ContinuousClock.Instant, date: Date, delay: Duration? = .zero) {
            self.instant = instant
            self.date = date
            self.delay = delay
        }

        /// When the receiver measured the fix, on the monotonic clock; `nil` when the delay is unknown.
        public var measured: ContinuousClock.Instant? { delay.map { instant.advanced(by: .zero - $0) } }
    }

    /// How long ago the receiver measured the fix, on the monotonic clock; `nil` when that is not established
    /// (no ``arrival``, or a held fix of unknown ``Arrival/delay``). Never judged by the wall clock, which can be
    /// years off on a computer without a real-time clock, nor by when the fix reached this process alone, which
    /// says nothing of a fix that waited in gpsd.
    ///
    /// The manager relates each receiver's time to the monotonic clock by a line under its least-delayed fixes
    /// (arrival time minus receiver time, the least of each second over the last 32 s of receiver time), as NTP's
    /// clock filter and chrony's regression do. The line's slope is the rate the receiver's clock runs at,
    /// learned: a simulator or replay whose clock runs 20 % slow or fast, or a receiver that drifts, gets true
    /// ages, as a real-time one does. A backlog that arrives in one burst after a stall lies above the line and
    /// cannot bend it, so each of its fixes reports its own lag: through an 8 s stall, with a clock 20 % slow or
    /// fast, each age is within 0.5 s of the true lag. The age counts from when the fix would have arrived with
    /// the least delay seen: the receiver's own computation and its serial line's constant latency are not in it.
    ///
    /// Limits: in a receiver's first two seconds its clock is taken to run at the rate learned before (at first,
    /// real time); a backlog longer than 32 s of receiver time loses the evidence from before it, and its later
    /// fixes seem younger; a clock more than 8 times faster than real time is judged as if it ran at real time;
    /// the estimate starts afresh, keeping the rate, when the receiver's time steps back. A fix gpsd held
    /// (``LocationManager``'s `?POLL;`) is judged by its receiver's line when some live fix arrived, else by gpsd's
    /// time of the poll if that is within a day after the fix's time; otherwise its age is unknown, and it is not
    /// fresh. <doc:FixAges> gives the whole rule.
    ///
    /// ```swift
    /// if let age = manager.location?.age, age < .seconds(2) { steer(by: manager.location!) } else { stop() }
    /// ```
    public var age: Duration? { arrival?.measured.map { $0.duration(to: .now) } }

    /// How long before `instant` the receiver measured the fix: its ``age`` then; `nil` when not established. A
    /// control loop that reads several values at one instant (``LocationSnapshot``) ages them all by it.
    public func age(at instant: ContinuousClock.Instant) -> Duration? {
        arrival?.measured.map { $0.duration(to: instant) }
    }

    /// Makes a location; every value but the coordinate is optional, and the time is now unless given.
    ///
    /// ```swift
    /// let fix = Location(coordinate: .init(latitude: -33.8568, longitude: 151.2153), altitude: 12,
    ///                    horizontalAccuracy: 3.5, timestamp: .now)
    /// ```
    public init(
        coordinate: Coordinate,
        altitude: Double? = nil,
        ellipsoidalAltitude: Double? = nil,
        horizontalAccuracy: Double? = nil,
        verticalAccuracy: Double? = nil,
        latitudeAccuracy: Double? = nil,
        longitudeAccuracy: Double? = nil,
        deviation: Deviation? = nil,
        baseline: Baseline? = nil,
        speed: Double? = nil,
        speedAccuracy: Double? = nil,
        course: Double? = nil,
        courseAccuracy: Double? = nil,
        climb: Double? = nil,
        timestamp: Date = Date(),
        fix: Fix = .threeDimensional,
        status: Status = .gps,
        device: String? = nil
    ) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.ellipsoidalAltitude = ellipsoidalAltitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.latitudeAccuracy = latitudeAccuracy
        self.longitudeAccuracy = longitudeAccuracy
        self.deviation = deviation
        self.baseline = baseline
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.climb = climb
        self.timestamp = timestamp
        self.fix = fix
        self.status = status
        self.device = device
    }
}

extension Location {
    /// Equal if they describe the same fix; ``arrival`` does not count.
    public static func == (lhs: Location, rhs: Location) -> Bool {
        lhs.coordinate == rhs.coordinate && lhs.altitude == rhs.altitude
            && lhs.ellipsoidalAltitude == rhs.ellipsoidalAltitude && lhs.horizontalAccuracy == rhs.horizontalAccuracy
            && lhs.verticalAccuracy == rhs.verticalAccuracy && lhs.latitudeAccuracy == rhs.latitudeAccuracy
            && lhs.longitudeAccuracy == rhs.longitudeAccuracy && lhs.deviation == rhs.deviation
            && lhs.baseline == rhs.baseline
            && lhs.speed == rhs.speed
            && lhs.speedAccuracy == rhs.speedAccuracy && lhs.course == rhs.course
            && lhs.courseAccuracy == rhs.courseAccuracy && lhs.climb == rhs.climb && lhs.timestamp == rhs.timestamp
            && lhs.fix == rhs.fix && lhs.status == rhs.status && lhs.device == rhs.device
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(coordinate)
        hasher.combine(timestamp)
        hasher.combine(device)
    }
}

extension Location: CustomStringConvertible {
    /// One line for people: `0.0012700, 0.0012700 alt 50.0 m ±4.2 m 10.00 m/s 225.0° 3D gps @ 2025-06-01T12:00:05.000Z`.
    public var description: String {
        var text = JSONText.fixed(coordinate.latitude, digits: 7) + ", " + JSONText.fixed(coordinate.longitude, digits: 7)
        if let altitude { text += " alt " + JSONText.fixed(altitude, digits: 1) + " m" }
        if let horizontalAccuracy { text += " ±" + JSONText.fixed(horizontalAccuracy, digits: 1) + " m" }
        if let speed { text += " " + JSONText.fixed(speed, digits: 2) + " m/s" }
        if let course { text += " " + JSONText.fixed(course, digits: 1) + "°" }
        text += " \(fix.rawValue) \(status.rawValue)"
        if let time = GPSDTime.string(from: timestamp) { text += " @ " + time }
        return text
    }
}
