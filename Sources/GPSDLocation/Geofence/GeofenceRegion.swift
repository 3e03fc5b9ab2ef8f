import GPSDCore

/// A circle on the Earth's surface to watch: a centre and a radius in metres, named by an identifier.
///
/// Like CoreLocation's `CLCircularRegion`. A region is checked when it is made (and when it is decoded): its
/// radius is a finite number of metres above 0 and its centre a coordinate on Earth, so a region that cannot be
/// true never reaches a ``GeofenceMonitor``. Its properties cannot be changed afterwards; make a new region
/// instead.
///
/// ```swift
/// let office = try GeofenceRegion(
///     identifier: "office", center: .init(latitude: 52.5163, longitude: 13.3777), radius: 150)
/// monitor.add(office)
/// ```
public struct GeofenceRegion: Sendable, Hashable, Codable {
    /// The region's name, unique within a monitor: adding a region with the identifier of one already there
    /// replaces it.
    public let identifier: String
    /// The centre of the circle, WGS84.
    public let center: Location.Coordinate
    /// The radius of the circle in metres, measured along the surface of the WGS84 ellipsoid.
    public let radius: Double

    /// Makes a region, refusing values that cannot be true.
    ///
    /// ```swift
    /// let home = try GeofenceRegion(identifier: "home", center: .init(latitude: -33.86, longitude: 151.21),
    ///                               radius: 80)
    /// ```
    /// - Parameters:
    ///   - identifier: the region's name, unique within a monitor.
    ///   - center: the centre: latitude in -90 ... 90, longitude in -180 ... 180, both finite.
    ///   - radius: metres, finite and above 0.
    /// - Throws: ``GeofenceError`` with ``GeofenceError/Code/invalidCenter`` or
    ///   ``GeofenceError/Code/invalidRadius``.
    public init(identifier: String, center: Location.Coordinate, radius: Double) throws(GeofenceError) {
        guard center.latitude.isFinite, (-90...90).contains(center.latitude) else {
            throw GeofenceError(.invalidCenter, "latitude \(center.latitude) is outside -90 ... 90")
        }
        guard center.longitude.isFinite, (-180...180).contains(center.longitude) else {
            throw GeofenceError(.invalidCenter, "longitude \(center.longitude) is outside -180 ... 180")
        }
        guard radius.isFinite, radius > 0 else {
            throw GeofenceError(
                .invalidRadius, "a region's radius must be a finite number of metres above 0, not \(radius)")
        }
        self.identifier = identifier
        self.center = center
        self.radius = radius
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, center, radius
    }

    /// Decodes a region, refusing one that cannot be true as ``init(identifier:center:radius:)`` does.
    ///
    /// - Throws: `DecodingError.dataCorrupted` (its underlying error the ``GeofenceError``) for a value that
    ///   cannot be true, or the decoder's own errors.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .identifier)
        let center = try container.decode(Location.Coordinate.self, forKey: .center)
        let radius = try container.decode(Double.self, forKey: .radius)
        do {
            try self.init(identifier: identifier, center: center, radius: radius)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }
}
