import FoundationEssentials
import Glibc

// Geodesics on the WGS84 ellipsoid (a = 6378137 m, f = 1/298.257223563), the datum GNSS receivers and gpsd report
// in: which way one point lies from another, and where a heading and a distance lead. Offsets in a local
// east/north/up frame are in `LocalOffset.swift` and `Location+LocalOffset.swift`; distances in
// `Location+Distance.swift`.

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

// MARK: - Implementation

extension Location.Coordinate {
    /// Whether the coordinate is one the geometry can work with: a finite longitude, a latitude in -90 ... 90.
    var isGeodetic: Bool { longitude.isFinite && latitude.isFinite && abs(latitude) <= 90 }
}

extension Geodesy {
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
}
