public import FoundationEssentials

/// Which way a vehicle points, from gpsd's ATT report: a gyrocompass, a magnetic compass, an IMU or a
/// dual-antenna receiver, as CoreLocation's `CLHeading` has it.
///
/// A heading is where the vehicle's bow points; course over ground (``Location/course``) is where it moves. The
/// two differ for a boat in a current, a car reversing or a robot turning on the spot, and a receiver standing
/// still has no course at all: a course is never passed off as a heading, and none is made from one.
///
/// Values gpsd did not report are `nil`, never NaN or a sentinel.
///
/// ```swift
/// for try await heading in gps.headingUpdates(filter: 5) {
///     print("pointing \(heading.trueHeading)° true")
/// }
/// ```
public struct Heading: Sendable, Hashable, Codable {
    /// Degrees clockwise from true north, 0 ..< 360: gpsd's `heading`, or else its magnetic heading (`mheading`)
    /// plus the last magnetic variation gpsd gave in the same receiver's TPVs of the session (`magvar`, east
    /// positive). gpsd sends no true heading for a magnetic compass alone: before the receiver's first fix there
    /// is no variation, and no heading; after it, the last variation is kept while the fix is lost. A sum is
    /// rounded to the decimals of its parts, as gpsd wrote them.
    public var trueHeading: Double
    /// Degrees clockwise from magnetic north, 0 ..< 360: gpsd's own (`mheading`, from gpsd 3.25 on, libgps
    /// API 14), or else ``trueHeading`` less the last magnetic variation gpsd gave in the same receiver's TPVs of
    /// the session (`magvar`, east positive), kept while the fix is lost (the variation changes by degrees over
    /// hundreds of kilometres, not in the minutes a fix is lost); `nil` when neither is known. The difference is
    /// rounded to the decimals of its parts, as gpsd wrote them: 34.15 less 4.1 is 30.05, not 30.049999999999997.
    public var magneticHeading: Double?
    /// The heading's estimated error in degrees; `nil` when not known. gpsd's ATT carries none (up to 3.27), so a
    /// heading from gpsd has none.
    public var headingAccuracy: Double?
    /// Pitch in degrees, -90 ... 90, as the sensor reports it (gpsd `pitch`).
    public var pitch: Double?
    /// Roll in degrees, -180 ... 180, as the sensor reports it (gpsd `roll`).
    public var roll: Double?
    /// When it was measured: the ATT's own time, or else that of the newest fix gpsd reported from the same
    /// receiver before it since the receiver was last added (the time of its epoch: gpsd sends an ATT right after
    /// that epoch's TPV, and NMEA heading sentences carry no time); `nil` when there was neither.
    public var timestamp: Date?
    /// The receiver or sensor that reported it (gpsd's device path), if known.
    public var device: String?
    /// When the heading reached this process, by the monotonic clock and the wall clock, and how long before that
    /// it was measured, as for a fix (``Location/Arrival``); `nil` for a heading not made by a manager. Not part of
    /// what makes two headings equal, nor of their JSON: it says when, not what.
    ///
    /// A heading whose ATT had no time of its own (gpsd 3.22's from `$GPHDT`, and any heading sentence's, whose
    /// ``timestamp`` is its epoch's fix's) was measured when it arrived, as far as anyone can tell: its delay is
    /// zero, and its age counts from its arrival, not from its epoch's fix, nor from a fix before its receiver went.
    /// A heading with a time of its own has its delay estimated from that time by the same relation of its
    /// receiver's clock to the monotonic clock that a fix's is (see ``Location/age``), learnt from the same
    /// receiver's live fixes (by device); it is `nil` (and so is ``age``) when that relation does not vouch for the
    /// time: no live fix of that device yet; a time more than 32 s past the receiver's newest live fix; or the
    /// receiver's time stepped back since. A loop that gates on the age then holds;
    /// ``LocationSnapshot/isHeadingStale`` still says whether headings are coming.
    public var arrival: Location.Arrival?

    /// How long ago the heading was measured, on the monotonic clock, as ``Location/age`` is for a fix; `nil` when
    /// that is not established (see ``arrival``). A heading sensor that stops reporting leaves the last heading
    /// growing older: a control loop checks this, or ``LocationSnapshot/isHeadingStale``.
    ///
    /// ```swift
    /// if let heading = manager.heading, let age = heading.age, age < .milliseconds(500) { steer(by: heading) }
    /// ```
    public var age: Duration? { arrival?.measured.map { $0.duration(to: .now) } }

    /// How long before `instant` the heading was measured: its age then; `nil` when not established.
    public func age(at instant: ContinuousClock.Instant) -> Duration? {
        arrival?.measured.map { $0.duration(to: instant) }
    }

    /// A heading: `Heading(trueHeading: 46.5, magneticHeading: 43.2)`.
    public init(
        trueHeading: Double, magneticHeading: Double? = nil, headingAccuracy: Double? = nil, pitch: Double? = nil,
        roll: Double? = nil, timestamp: Date? = nil, device: String? = nil
    ) {
        self.trueHeading = trueHeading
        self.magneticHeading = magneticHeading
        self.headingAccuracy = headingAccuracy
        self.pitch = pitch
        self.roll = roll
        self.timestamp = timestamp
        self.device = device
    }

    private enum CodingKeys: String, CodingKey {
        case trueHeading, magneticHeading, headingAccuracy, pitch, roll, timestamp, device
    }

    /// Equal if they describe the same heading; ``arrival`` does not count.
    public static func == (lhs: Heading, rhs: Heading) -> Bool {
        lhs.trueHeading == rhs.trueHeading && lhs.magneticHeading == rhs.magneticHeading
            && lhs.headingAccuracy == rhs.headingAccuracy && lhs.pitch == rhs.pitch && lhs.roll == rhs.roll
            && lhs.timestamp == rhs.timestamp && lhs.device == rhs.device
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(trueHeading)
        hasher.combine(timestamp)
        hasher.combine(device)
    }

    /// The smaller angle, in degrees (0 ... 180), between this heading's ``trueHeading`` and `other`'s: 350° and
    /// 10° are 20° apart.
    public func angle(from other: Heading) -> Double {
        let difference = abs(trueHeading - other.trueHeading).truncatingRemainder(dividingBy: 360)
        return min(difference, 360 - difference)
    }

    /// Whether it differs from `last` by at least `filter` degrees (``angle(from:)``): `nil` or 0 passes every
    /// heading, as does the first (`last` is `nil`).
    public func passes(headingFilter filter: Double?, since last: Heading?) -> Bool {
        guard let filter, filter > 0, let last else { return true }
        return angle(from: last) >= filter
    }
}
