import FoundationEssentials
import Glibc

extension Location {
    /// The distance in metres along the surface of the WGS84 ellipsoid between this location and another.
    ///
    /// Uses Vincenty's inverse formula (sub-millimetre on the ellipsoid); for nearly antipodal points,
    /// where it does not converge, falls back to a great-circle distance on a sphere of mean radius.
    /// Altitude is ignored, as in CoreLocation.
    ///
    /// ```swift
    /// let a = Location(coordinate: .init(latitude: 0, longitude: 0))
    /// let b = Location(coordinate: .init(latitude: 0, longitude: 1))
    /// a.distance(from: b)   // 111319.49 m
    /// ```
    public func distance(from other: Location) -> Double {
        coordinate.distance(from: other.coordinate)
    }
}

extension Location.Coordinate {
    /// The ellipsoidal (WGS84) distance in metres to another coordinate. See ``Location/distance(from:)``.
    public func distance(from other: Location.Coordinate) -> Double {
        Geodesy.vincentyInverse(self, other)?.distance ?? Geodesy.haversineDistance(self, other)
    }
}

enum Geodesy {
    static let semiMajorAxis = 6_378_137.0
    static let flattening = 1 / 298.257_223_563
    static let semiMinorAxis = semiMajorAxis * (1 - flattening)
    static let meanRadius = 6_371_008.8

    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

    /// The difference `to - from` of two longitudes in degrees, brought into -180 ... 180 (so a line across the
    /// antimeridian is the short one, and 180 and -180 are the same meridian).
    static func longitudeDifference(from: Double, to: Double) -> Double {
        remainder(to - from, 360)
    }

    static func haversineDistance(_ a: Location.Coordinate, _ b: Location.Coordinate) -> Double {
        let φ1 = radians(a.latitude), φ2 = radians(b.latitude)
        let Δφ = φ2 - φ1, Δλ = radians(b.longitude - a.longitude)
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * meanRadius * asin(min(1, sqrt(h)))
    }

    /// What Vincenty's inverse solution gives: the geodesic's length and its azimuths at both ends.
    struct Inverse {
        /// Metres along the ellipsoid.
        var distance: Double
        /// The azimuth leaving the first point, radians clockwise from north, -π ... π.
        var initialAzimuth: Double
        /// The azimuth arriving at the second point (the direction of travel there), radians, -π ... π.
        var finalAzimuth: Double
    }

    /// Vincenty's inverse solution on the WGS84 ellipsoid; `nil` if it does not converge (nearly antipodal
    /// points). Coincident points give a distance of 0 and azimuths of 0. A coordinate that is not finite gives
    /// NaN throughout.
    static func vincentyInverse(_ a: Location.Coordinate, _ b: Location.Coordinate) -> Inverse? {
        guard a.latitude.isFinite, a.longitude.isFinite, b.latitude.isFinite, b.longitude.isFinite else {
            return Inverse(distance: .nan, initialAzimuth: .nan, finalAzimuth: .nan)
        }
        let f = flattening
        let L = radians(longitudeDifference(from: a.longitude, to: b.longitude))
        let U1 = atan((1 - f) * tan(radians(a.latitude)))
        let U2 = atan((1 - f) * tan(radians(b.latitude)))
        let sinU1 = sin(U1), cosU1 = cos(U1), sinU2 = sin(U2), cosU2 = cos(U2)
        var λ = L
        for _ in 0..<200 {
            let sinλ = sin(λ), cosλ = cos(λ)
            let sinσ = sqrt(
                (cosU2 * sinλ) * (cosU2 * sinλ)
                    + (cosU1 * sinU2 - sinU1 * cosU2 * cosλ) * (cosU1 * sinU2 - sinU1 * cosU2 * cosλ))
            if sinσ == 0 { return Inverse(distance: 0, initialAzimuth: 0, finalAzimuth: 0) }  // coincident points
            let cosσ = sinU1 * sinU2 + cosU1 * cosU2 * cosλ
            let σ = atan2(sinσ, cosσ)
            let sinα = cosU1 * cosU2 * sinλ / sinσ
            let cos2α = 1 - sinα * sinα
            let cos2σm = cos2α != 0 ? cosσ - 2 * sinU1 * sinU2 / cos2α : 0  // equatorial line
            let C = f / 16 * cos2α * (4 + f * (4 - 3 * cos2α))
            let previous = λ
            λ = L + (1 - C) * f * sinα * (σ + C * sinσ * (cos2σm + C * cosσ * (-1 + 2 * cos2σm * cos2σm)))
            if abs(λ - previous) < 1e-12 {
                let u2 = cos2α * (semiMajorAxis * semiMajorAxis - semiMinorAxis * semiMinorAxis)
                    / (semiMinorAxis * semiMinorAxis)
                let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
                let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
                let Δσ = B * sinσ * (cos2σm + B / 4 * (cosσ * (-1 + 2 * cos2σm * cos2σm)
                    - B / 6 * cos2σm * (-3 + 4 * sinσ * sinσ) * (-3 + 4 * cos2σm * cos2σm)))
                let sinλ = sin(λ), cosλ = cos(λ)
                return Inverse(
                    distance: semiMinorAxis * A * (σ - Δσ),
                    initialAzimuth: atan2(cosU2 * sinλ, cosU1 * sinU2 - sinU1 * cosU2 * cosλ),
                    finalAzimuth: atan2(cosU1 * sinλ, -sinU1 * cosU2 + cosU1 * sinU2 * cosλ))
            }
        }
        return nil
    }
}
