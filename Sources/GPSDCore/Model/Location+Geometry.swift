import FoundationEssentials
import Glibc

// Geometry on the WGS84 ellipsoid (a = 6378137 m, f = 1/298.257223563), the datum GNSS receivers and gpsd report
// in: which way one point lies from another, where a heading and a distance lead, and local east/north/up
// offsets for a robot's map frame.

// MARK: - Bearing

extension Location {
    /// The initial bearing (forward azimuth) towards another location, in degrees clockwise from true north,
    /// 0 ..< 360: the direction to set off in along the shortest path on the WGS84 ellipsoid.
    ///
    /// See ``Location/Coordinate/bearing(to:)`` for the method and the edge cases. Altitude is ignored.
    ///
    /// ```swift
    /// let dock = Location(coordinate: .init(latitude: 52.5163, longitude: 13.3777))
    /// let goal = Location(coordinate: .init(latitude: 52.5200, longitude: 13.3777))
    /// dock.bearing(to: goal)   // 0.0: due north
    /// ```
    public func bearing(to other: Location) -> Double {
        coordinate.bearing(to: other.coordinate)
    }
}

extension Location.Coordinate {
    /// The initial bearing (forward azimuth) towards another coordinate, in degrees clockwise from true north,
    /// 0 ..< 360, along the geodesic on the WGS84 ellipsoid.
    ///
    /// Vincenty's inverse formula, the same solution ``distance(from:)`` uses. For nearly antipodal points,
    /// where it does not converge, the bearing is the great circle's on a sphere (good to a fraction of a degree
    /// there, where the shortest path is nearly undetermined anyway).
    ///
    /// - Coincident points (equal coordinates, or longitudes 180 and -180 at the same latitude) give 0.
    /// - From a pole, the bearing is measured as if the pole lay on this coordinate's meridian (as GeographicLib
    ///   does): from `(90, 0)` towards `(0, 10)` it is 170. Towards the north pole it is 0, the south pole 180.
    /// - A latitude outside -90 ... 90, or a latitude or longitude that is NaN or infinite, gives NaN.
    ///
    /// ```swift
    /// let flindersPeak = Location.Coordinate(latitude: -37.951033417, longitude: 144.424867889)
    /// let buninyong = Location.Coordinate(latitude: -37.652821139, longitude: 143.926495528)
    /// flindersPeak.bearing(to: buninyong)   // 306.868159…° (306°52′05.37″ in Vincenty 1975)
    /// ```
    public func bearing(to other: Location.Coordinate) -> Double {
        guard isGeodetic, other.isGeodetic else { return .nan }
        let azimuth = Geodesy.vincentyInverse(self, other)?.initialAzimuth
            ?? Geodesy.sphericalInitialAzimuth(self, other)
        return Geodesy.normalizedBearing(Geodesy.degrees(azimuth))
    }

    /// The final bearing: the direction of travel, in degrees clockwise from true north, 0 ..< 360, on arriving
    /// at another coordinate along the geodesic from this one.
    ///
    /// On an ellipsoid (as on a sphere) the direction changes along the way, so this is not ``bearing(to:)``
    /// plus or minus 180 degrees. Same method and edge cases as ``bearing(to:)``.
    ///
    /// ```swift
    /// let flindersPeak = Location.Coordinate(latitude: -37.951033417, longitude: 144.424867889)
    /// let buninyong = Location.Coordinate(latitude: -37.652821139, longitude: 143.926495528)
    /// flindersPeak.finalBearing(to: buninyong)   // 307.17363…° (the reverse azimuth 127°10′25.07″ plus 180°)
    /// ```
    public func finalBearing(to other: Location.Coordinate) -> Double {
        guard isGeodetic, other.isGeodetic else { return .nan }
        let azimuth = Geodesy.vincentyInverse(self, other)?.finalAzimuth
            ?? Geodesy.sphericalInitialAzimuth(other, self) + .pi
        return Geodesy.normalizedBearing(Geodesy.degrees(azimuth))
    }
}

// MARK: - Destination

extension Location {
    /// The coordinate reached by travelling `distance` metres along the geodesic that leaves this location at
    /// `bearing` degrees clockwise from true north. See ``Location/Coordinate/destination(bearing:distance:)``.
    ///
    /// ```swift
    /// let here = Location(coordinate: .init(latitude: 0, longitude: 0))
    /// here.destination(bearing: 90, distance: 111_319.491)   // ≈ (0, 1): one degree east along the equator
    /// ```
    public func destination(bearing: Double, distance: Double) -> Location.Coordinate {
        coordinate.destination(bearing: bearing, distance: distance)
    }
}

extension Location.Coordinate {
    /// The coordinate reached by travelling `distance` metres along the geodesic that leaves this coordinate
    /// at `bearing` degrees clockwise from true north, on the WGS84 ellipsoid.
    ///
    /// Vincenty's direct formula (sub-millimetre for any distance). The result's longitude is in
    /// -180 ..< 180 (180 comes out as -180); its latitude in -90 ... 90.
    ///
    /// - Any bearing is accepted (370 is 10); a negative distance goes the opposite way (`bearing + 180`).
    /// - A distance of 0 gives this coordinate back exactly, its longitude brought into -180 ..< 180.
    /// - From a pole, the bearing is measured as if the pole lay on this coordinate's meridian, as in
    ///   ``bearing(to:)``: `(90, 0)` with bearing 180 goes down the meridian 0.
    /// - A latitude outside -90 ... 90, or a latitude, longitude, bearing or distance that is NaN or infinite,
    ///   gives NaN for both latitude and longitude.
    ///
    /// ```swift
    /// let flindersPeak = Location.Coordinate(latitude: -37.951033417, longitude: 144.424867889)
    /// let buninyong = flindersPeak.destination(bearing: 306.868158, distance: 54_972.271)
    /// // ≈ (-37.652821, 143.926496)
    /// ```
    public func destination(bearing: Double, distance: Double) -> Location.Coordinate {
        guard isGeodetic, bearing.isFinite, distance.isFinite else {
            return Location.Coordinate(latitude: .nan, longitude: .nan)
        }
        if distance < 0 { return destination(bearing: bearing + 180, distance: -distance) }
        if distance == 0 {
            return Location.Coordinate(latitude: latitude, longitude: Geodesy.normalizedLongitude(longitude))
        }
        return Geodesy.vincentyDirect(from: self, azimuth: Geodesy.radians(fmod(bearing, 360)), distance: distance)
    }
}

// MARK: - Local tangent plane

/// An offset in metres in the local tangent plane of a reference location: east, north and up.
///
/// The axes are those of ROS REP 103's ENU frames: x east, y north, z up along the WGS84 ellipsoid's normal at the
/// reference, right-handed. ``ned`` gives the same offset as aviation's north, east, down.
///
/// Offsets are exact Cartesian vectors (through Earth-centred, Earth-fixed coordinates, not a flat-earth
/// approximation): a point 10 km away on the ellipsoid lies about 7.8 m below the reference's horizontal plane.
///
/// ```swift
/// let base = Location(coordinate: .init(latitude: 52.5163, longitude: 13.3777), ellipsoidalAltitude: 80)
/// let rover = Location(coordinate: .init(latitude: 52.5164, longitude: 13.3779), ellipsoidalAltitude: 81)
/// let offset = rover.offset(from: base)   // east 13.6, north 11.1, up 1.0 (metres, rounded)
/// let back = base.location(atOffset: offset)   // rover's coordinate and ellipsoidal altitude
/// ```
public struct LocalOffset: Sendable, Hashable, Codable {
    /// Metres east of the reference (ENU x).
    public var east: Double
    /// Metres north of the reference (ENU y).
    public var north: Double
    /// Metres up along the reference's ellipsoidal normal (ENU z).
    public var up: Double

    /// An offset from east, north and up in metres.
    ///
    /// ```swift
    /// let ahead = LocalOffset(east: 0, north: 5, up: 0)   // 5 m north of the reference
    /// ```
    public init(east: Double, north: Double, up: Double) {
        self.east = east
        self.north = north
        self.up = up
    }

    /// An offset from aviation's north, east, down.
    ///
    /// ```swift
    /// let offset = LocalOffset(LocalOffset.NED(north: 10, east: 2, down: -3))
    /// offset.up   // 3.0
    /// ```
    public init(_ ned: NED) {
        self.init(east: ned.east, north: ned.north, up: -ned.down)
    }

    /// The same offset as north, east, down (aviation's NED frame): `(north, east, -up)`.
    ///
    /// ```swift
    /// LocalOffset(east: 2, north: 10, up: 3).ned   // north 10, east 2, down -3
    /// ```
    public var ned: NED {
        NED(north: north, east: east, down: -up)
    }

    /// An offset in metres as north, east, down: aviation's local frame, right-handed, z down along the
    /// ellipsoidal normal.
    ///
    /// ```swift
    /// let ned = LocalOffset.NED(north: 10, east: 2, down: -3)
    /// ned.down   // -3.0: three metres up
    /// ```
    public struct NED: Sendable, Hashable, Codable {
        /// Metres north of the reference.
        public var north: Double
        /// Metres east of the reference.
        public var east: Double
        /// Metres down along the reference's ellipsoidal normal; negative above the reference.
        public var down: Double

        /// An offset from north, east and down in metres.
        ///
        /// ```swift
        /// let below = LocalOffset.NED(north: 0, east: 0, down: 2)   // 2 m straight down
        /// ```
        public init(north: Double, east: Double, down: Double) {
            self.north = north
            self.east = east
            self.down = down
        }
    }
}

extension Location {
    /// Where this location lies relative to a reference, as east, north, up metres in the reference's local
    /// tangent plane (ENU, as in ROS REP 103; ``LocalOffset/ned`` for north, east, down).
    ///
    /// Both locations go to Earth-centred, Earth-fixed coordinates on the WGS84 ellipsoid
    /// (a = 6378137 m, f = 1/298.257223563) at their ``ellipsoidalAltitude`` (height above the ellipsoid, not
    /// ``altitude`` above mean sea level; a location without one counts as on the ellipsoid, height 0), and
    /// their difference is rotated into the reference's east, north and up axes. Exact up to rounding
    /// (nanometres), at any distance.
    ///
    /// A latitude outside -90 ... 90, or a latitude, longitude or ellipsoidal altitude that is NaN or infinite,
    /// in either location, gives NaN components.
    ///
    /// ```swift
    /// let base = Location(coordinate: .init(latitude: 45, longitude: 7), ellipsoidalAltitude: 300)
    /// let rover = Location(coordinate: .init(latitude: 45.009, longitude: 7), ellipsoidalAltitude: 300)
    /// let offset = rover.offset(from: base)   // east 0, north ≈ 1000.234, up ≈ -0.079 (the Earth’s curvature)
    /// offset.ned.down                         // ≈ 0.079
    /// ```
    public func offset(from reference: Location) -> LocalOffset {
        guard coordinate.isGeodetic, reference.coordinate.isGeodetic, (ellipsoidalAltitude ?? 0).isFinite,
            (reference.ellipsoidalAltitude ?? 0).isFinite
        else { return LocalOffset(east: .nan, north: .nan, up: .nan) }
        let point = Geodesy.ecef(coordinate, height: ellipsoidalAltitude ?? 0)
        let origin = Geodesy.ecef(reference.coordinate, height: reference.ellipsoidalAltitude ?? 0)
        return Geodesy.enu(
            dx: point.x - origin.x, dy: point.y - origin.y, dz: point.z - origin.z, at: reference.coordinate)
    }

    /// The location at an east, north, up offset from this one: the inverse of ``offset(from:)``.
    ///
    /// The offset is rotated out of this location's tangent plane into Earth-centred, Earth-fixed coordinates
    /// (WGS84, from this location's ``ellipsoidalAltitude``, or 0 without one) and converted back to latitude,
    /// longitude and height above the ellipsoid by Bowring's iteration, to well under a millimetre for any point
    /// farther than about 50 km from the Earth's centre.
    ///
    /// The result has only a ``coordinate`` (longitude in -180 ..< 180) and an ``ellipsoidalAltitude``; its
    /// ``altitude`` above mean sea level is `nil` (that needs a geoid model), as are its accuracies, speed,
    /// course and timestamp. A latitude outside -90 ... 90, or any input that is NaN or infinite, gives NaN
    /// latitude, longitude and ellipsoidal altitude.
    ///
    /// ```swift
    /// let base = Location(coordinate: .init(latitude: 45, longitude: 7), ellipsoidalAltitude: 300)
    /// let waypoint = base.location(atOffset: LocalOffset(east: 20, north: 50, up: 0))
    /// waypoint.offset(from: base)   // east 20, north 50, up 0 (to nanometres)
    /// ```
    public func location(atOffset offset: LocalOffset) -> Location {
        guard coordinate.isGeodetic, (ellipsoidalAltitude ?? 0).isFinite else {
            return Location(coordinate: .init(latitude: .nan, longitude: .nan), ellipsoidalAltitude: .nan)
        }
        let origin = Geodesy.ecef(coordinate, height: ellipsoidalAltitude ?? 0)
        let delta = Geodesy.ecefDelta(offset, at: coordinate)
        let (point, height) = Geodesy.geodetic(x: origin.x + delta.x, y: origin.y + delta.y, z: origin.z + delta.z)
        return Location(coordinate: point, ellipsoidalAltitude: height)
    }
}

// MARK: - Implementation

extension Location.Coordinate {
    /// Whether the coordinate is one the geometry can work with: a finite longitude, a latitude in -90 ... 90.
    var isGeodetic: Bool { longitude.isFinite && latitude.isFinite && abs(latitude) <= 90 }
}

extension Geodesy {
    /// The first eccentricity squared, e² = f (2 - f).
    static let eccentricitySquared = flattening * (2 - flattening)
    /// The second eccentricity squared, e′² = e² / (1 - e²).
    static let secondEccentricitySquared = eccentricitySquared / (1 - eccentricitySquared)

    /// Degrees into 0 ..< 360.
    static func normalizedBearing(_ degrees: Double) -> Double {
        var result = fmod(degrees, 360)
        if result < 0 { result += 360 }
        return result < 360 ? result : 0  // -1e-17 + 360 rounds to 360
    }

    /// Degrees of longitude into -180 ..< 180.
    static func normalizedLongitude(_ degrees: Double) -> Double {
        let result = remainder(degrees, 360)  // -180 ... 180
        return result == 180 ? -180 : result
    }

    /// The initial azimuth of the great circle on a sphere, radians, -π ... π: the fallback for nearly antipodal
    /// points, where Vincenty's inverse solution does not converge.
    static func sphericalInitialAzimuth(_ a: Location.Coordinate, _ b: Location.Coordinate) -> Double {
        let φ1 = radians(a.latitude), φ2 = radians(b.latitude)
        let Δλ = radians(longitudeDifference(from: a.longitude, to: b.longitude))
        return atan2(sin(Δλ) * cos(φ2), cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ))
    }

    /// Vincenty's direct solution on the WGS84 ellipsoid: from a point, an azimuth (radians) and a non-negative
    /// distance (metres) to the end point. Inputs must be finite.
    static func vincentyDirect(from start: Location.Coordinate, azimuth α1: Double, distance s: Double)
        -> Location.Coordinate
    {
        let f = flattening, a = semiMajorAxis, b = semiMinorAxis
        let sinα1 = sin(α1), cosα1 = cos(α1)
        let tanU1 = (1 - f) * tan(radians(start.latitude))
        let cosU1 = 1 / sqrt(1 + tanU1 * tanU1), sinU1 = tanU1 * cosU1
        let σ1 = atan2(tanU1, cosα1)  // angular distance on the sphere from the equator to the start
        let sinα = cosU1 * sinα1  // azimuth of the geodesic at the equator
        let cos2α = 1 - sinα * sinα
        let u2 = cos2α * (a * a - b * b) / (b * b)
        let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))

        func Δσ(_ σ: Double) -> Double {
            let cos2σm = cos(2 * σ1 + σ), sinσ = sin(σ), cosσ = cos(σ)
            return B * sinσ * (cos2σm + B / 4 * (cosσ * (-1 + 2 * cos2σm * cos2σm)
                - B / 6 * cos2σm * (-3 + 4 * sinσ * sinσ) * (-3 + 4 * cos2σm * cos2σm)))
        }
        var σ = s / (b * A)
        for _ in 0..<100 {  // converges in a handful of steps: Δσ is of order f
            let next = s / (b * A) + Δσ(σ)
            let done = abs(next - σ) < 1e-12
            σ = next
            if done { break }
        }

        let sinσ = sin(σ), cosσ = cos(σ), cos2σm = cos(2 * σ1 + σ)
        let x = sinU1 * sinσ - cosU1 * cosσ * cosα1
        let φ2 = atan2(sinU1 * cosσ + cosU1 * sinσ * cosα1, (1 - f) * sqrt(sinα * sinα + x * x))
        let λ = atan2(sinσ * sinα1, cosU1 * cosσ - sinU1 * sinσ * cosα1)
        let C = f / 16 * cos2α * (4 + f * (4 - 3 * cos2α))
        let L = λ - (1 - C) * f * sinα * (σ + C * sinσ * (cos2σm + C * cosσ * (-1 + 2 * cos2σm * cos2σm)))
        return Location.Coordinate(
            latitude: degrees(φ2), longitude: normalizedLongitude(start.longitude + degrees(L)))
    }

    /// Earth-centred, Earth-fixed coordinates (metres) of a coordinate at a height above the WGS84 ellipsoid.
    static func ecef(_ coordinate: Location.Coordinate, height h: Double) -> (x: Double, y: Double, z: Double) {
        let φ = radians(coordinate.latitude), λ = radians(coordinate.longitude)
        let sinφ = sin(φ), cosφ = cos(φ)
        let N = semiMajorAxis / sqrt(1 - eccentricitySquared * sinφ * sinφ)  // prime vertical radius
        return ((N + h) * cosφ * cos(λ), (N + h) * cosφ * sin(λ), (N * (1 - eccentricitySquared) + h) * sinφ)
    }

    /// An ECEF difference rotated into the east, north, up axes at a coordinate.
    static func enu(dx: Double, dy: Double, dz: Double, at reference: Location.Coordinate) -> LocalOffset {
        let φ = radians(reference.latitude), λ = radians(reference.longitude)
        let sinφ = sin(φ), cosφ = cos(φ), sinλ = sin(λ), cosλ = cos(λ)
        return LocalOffset(
            east: -sinλ * dx + cosλ * dy,
            north: -sinφ * cosλ * dx - sinφ * sinλ * dy + cosφ * dz,
            up: cosφ * cosλ * dx + cosφ * sinλ * dy + sinφ * dz)
    }

    /// An east, north, up offset at a coordinate rotated into an ECEF difference (the transpose of
    /// `enu(dx:dy:dz:at:)`).
    static func ecefDelta(_ offset: LocalOffset, at reference: Location.Coordinate)
        -> (x: Double, y: Double, z: Double)
    {
        let φ = radians(reference.latitude), λ = radians(reference.longitude)
        let sinφ = sin(φ), cosφ = cos(φ), sinλ = sin(λ), cosλ = cos(λ)
        let (e, n, u) = (offset.east, offset.north, offset.up)
        return (
            -sinλ * e - sinφ * cosλ * n + cosφ * cosλ * u,
            cosλ * e - sinφ * sinλ * n + cosφ * sinλ * u,
            cosφ * n + sinφ * u)
    }

    /// Latitude, longitude (-180 ..< 180) and height above the WGS84 ellipsoid of an ECEF point, by Bowring's
    /// iteration on the reduced latitude. Converges to rounding in two or three steps for any point outside the
    /// ellipsoid's evolute (within about 43 km of the centre, where the nearest surface point is not unique).
    static func geodetic(x: Double, y: Double, z: Double) -> (Location.Coordinate, height: Double) {
        guard x.isFinite, y.isFinite, z.isFinite else {
            return (Location.Coordinate(latitude: .nan, longitude: .nan), .nan)
        }
        let a = semiMajorAxis, b = semiMinorAxis, e2 = eccentricitySquared, ep2 = secondEccentricitySquared
        let p = (x * x + y * y).squareRoot()  // distance from the axis
        var β = atan2(z, (1 - flattening) * p)  // reduced latitude, first guess
        var φ = 0.0
        for _ in 0..<10 {
            let sinβ = sin(β), cosβ = cos(β)
            // Inside the evolute the denominator can turn negative; clamping keeps φ within ±90°.
            φ = atan2(z + ep2 * b * sinβ * sinβ * sinβ, max(0, p - e2 * a * cosβ * cosβ * cosβ))
            let next = atan2((1 - flattening) * sin(φ), cos(φ))
            let done = abs(next - β) < 1e-15
            β = next
            if done { break }
        }
        let sinφ = sin(φ), cosφ = cos(φ)
        // Stable at the poles and the equator alike (no division by cos φ).
        let height = p * cosφ + z * sinφ - a * (1 - e2 * sinφ * sinφ).squareRoot()
        let longitude = normalizedLongitude(degrees(atan2(y, x)))
        return (Location.Coordinate(latitude: degrees(φ), longitude: longitude), height)
    }
}
