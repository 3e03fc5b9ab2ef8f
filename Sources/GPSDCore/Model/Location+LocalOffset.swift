import FoundationEssentials
import Glibc

// A location as an offset in a reference's local tangent plane and back, through Earth-centred, Earth-fixed
// coordinates on the WGS84 ellipsoid (a = 6378137 m, f = 1/298.257223563).

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
    /// The result has only a ``coordinate`` (longitude in -180 ..< 180), an ``ellipsoidalAltitude`` and this
    /// location's ``timestamp``; its ``altitude`` above mean sea level is `nil` (that needs a geoid model), as are
    /// its accuracies, speed and course. A latitude outside -90 ... 90, or any input that is NaN or infinite, gives NaN
    /// latitude, longitude and ellipsoidal altitude.
    ///
    /// ```swift
    /// let base = Location(coordinate: .init(latitude: 45, longitude: 7), ellipsoidalAltitude: 300)
    /// let waypoint = base.location(atOffset: LocalOffset(east: 20, north: 50, up: 0))
    /// waypoint.offset(from: base)   // east 20, north 50, up 0 (to nanometres)
    /// ```
    public func location(atOffset offset: LocalOffset) -> Location {
        guard coordinate.isGeodetic, (ellipsoidalAltitude ?? 0).isFinite else {
            return Location(coordinate: .init(latitude: .nan, longitude: .nan), ellipsoidalAltitude: .nan, timestamp: timestamp)
        }
        let origin = Geodesy.ecef(coordinate, height: ellipsoidalAltitude ?? 0)
        let delta = Geodesy.ecefDelta(offset, at: coordinate)
        let (point, height) = Geodesy.geodetic(x: origin.x + delta.x, y: origin.y + delta.y, z: origin.z + delta.z)
        return Location(coordinate: point, ellipsoidalAltitude: height, timestamp: timestamp)
    }
}

// MARK: - Implementation

extension Geodesy {
    /// The first eccentricity squared, e² = f (2 - f).
    static let eccentricitySquared = flattening * (2 - flattening)
    /// The second eccentricity squared, e′² = e² / (1 - e²).
    static let secondEccentricitySquared = eccentricitySquared / (1 - eccentricitySquared)

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
