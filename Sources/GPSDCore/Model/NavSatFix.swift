public import FoundationEssentials

/// A fix in the shape of ROS's `sensor_msgs/NavSatFix`, made from a ``Location``: what a robot's state
/// estimator (robot_localization, a Kalman filter) takes.
///
/// Units and frames are ROS's (REP 103): degrees, metres, the WGS84 ellipsoid, and a position covariance in
/// m² in a local East-North-Up frame at the fix, row-major.
///
/// ## Where the covariance comes from
/// ``positionCovarianceType`` says which of these it is:
/// - ``CovarianceType/diagonalKnown``: the receiver's own 1-sigma errors of latitude, longitude and altitude
///   (gpsd's GST report, ``Location/deviation``), squared: east = σ_lon², north = σ_lat², up = σ_alt².
/// - ``CovarianceType/approximated``: gpsd's error estimates, which it documents as about 95 % confidence,
///   turned into 1-sigma variances: per axis (`epx`, `epy`, `epv`) σ = e / 1.96 (a normal distribution's
///   two-sided 95 % bound); from the horizontal estimate alone (`eph`, a radius), σ = eph / 2.4477 for east and
///   north alike (√χ²₂(0.95), the 95 % circle of a 2D normal distribution). Also when GST gave the horizontal
///   errors but not the vertical one, and the vertical comes from `epv`.
/// - ``CovarianceType/unknown``: neither; the matrix is all zeros, as ROS asks.
///
/// A vertical variance that nothing gave (a 2D fix, or a 3D fix without a vertical error: gpsd 3.22 sends those
/// for receivers without GSA) is ``unknownVariance`` in the matrix, never 0, which a filter would take for an
/// exact altitude; ``upVariance`` is then `nil`, and the type is at best ``CovarianceType/approximated``.
///
/// ```swift
/// let message = NavSatFix(fix)
/// print(message.status, message.positionCovarianceType, message.positionCovariance[0])   // fix diagonalKnown 0.36
/// ```
public struct NavSatFix: Sendable, Hashable, Codable {
    /// ROS's `NavSatStatus.status`.
    public enum Status: Int8, Sendable, Hashable, Codable {
        /// No fix (ROS `STATUS_NO_FIX`, -1).
        case noFix = -1
        /// An unaugmented fix (`STATUS_FIX`, 0).
        case fix = 0
        /// A fix with satellite-based augmentation or DGPS (`STATUS_SBAS_FIX`, 1).
        case sbasFix = 1
        /// A fix with ground-based augmentation: RTK, fixed or float (`STATUS_GBAS_FIX`, 2).
        case gbasFix = 2
    }

    /// ROS's `NavSatStatus.service`: the constellations used.
    public struct Service: OptionSet, Sendable, Hashable, Codable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let gps = Service(rawValue: 1)
        public static let glonass = Service(rawValue: 2)
        public static let compass = Service(rawValue: 4)
        public static let galileo = Service(rawValue: 8)
    }

    /// ROS's `position_covariance_type`.
    public enum CovarianceType: UInt8, Sendable, Hashable, Codable {
        case unknown = 0
        case approximated = 1
        case diagonalKnown = 2
        case known = 3
    }

    /// The fix's own time (the receiver's UTC), for the message header's stamp.
    public var timestamp: Date?
    public var status: Status
    public var service: Service
    /// Degrees, positive north.
    public var latitude: Double
    /// Degrees, positive east.
    public var longitude: Double
    /// Metres above the WGS84 ellipsoid (``Location/ellipsoidalAltitude``), as ROS asks; `nil` when unknown
    /// (ROS writes NaN).
    public var altitude: Double?
    /// 3×3, row-major, m², East-North-Up.
    public var positionCovariance: [Double]
    public var positionCovarianceType: CovarianceType

    /// The east variance in m², `nil` if unknown (or the matrix is not 3×3).
    public var eastVariance: Double? { positionCovarianceType == .unknown ? nil : element(0) }
    /// The north variance in m², `nil` if unknown (or the matrix is not 3×3).
    public var northVariance: Double? { positionCovarianceType == .unknown ? nil : element(4) }
    /// The up variance in m², `nil` if unknown (or the matrix is not 3×3).
    public var upVariance: Double? { hasVerticalVariance ? element(8) : nil }
    /// Whether the up variance is known (a 3D fix with a vertical error estimate).
    public private(set) var hasVerticalVariance: Bool

    private func element(_ index: Int) -> Double? {
        positionCovariance.count == 9 ? positionCovariance[index] : nil
    }

    /// The variance, in m², that stands for "unknown" where ROS's matrix must hold a number: (1000 km)², the
    /// standard deviation nmea_navsat_driver gives an invalid fix, so that a filter gives the value no weight.
    public static let unknownVariance = 1e12

    /// Two-sided 95 % bound of a normal distribution, in standard deviations.
    public static let sigmasPer95Percent1D = 1.959_963_984_540_054
    /// Radius of the 95 % circle of a circular 2D normal distribution, in standard deviations: √χ²₂(0.95).
    public static let sigmasPer95Percent2D = 2.447_746_830_680_816

    /// The message for `location`. `service` names the constellations, which a ``Location`` does not carry.
    public init(_ location: Location, service: Service = .gps) {
        timestamp = location.timestamp
        status = Status(location.status)
        self.service = service
        latitude = location.coordinate.latitude
        longitude = location.coordinate.longitude
        altitude = location.ellipsoidalAltitude

        let per1D = Self.sigmasPer95Percent1D
        let up: (variance: Double, measured: Bool)? =
            if let σ = location.deviation?.altitude { (σ * σ, true) }
            else if let e = location.verticalAccuracy { ((e / per1D) * (e / per1D), false) }
            else { nil }
        let horizontal: (east: Double, north: Double, measured: Bool)? =
            if let σlat = location.deviation?.latitude, let σlon = location.deviation?.longitude {
                (σlon * σlon, σlat * σlat, true)
            } else if let epx = location.longitudeAccuracy, let epy = location.latitudeAccuracy {
                ((epx / per1D) * (epx / per1D), (epy / per1D) * (epy / per1D), false)
            } else if let eph = location.horizontalAccuracy {
                ((eph / Self.sigmasPer95Percent2D) * (eph / Self.sigmasPer95Percent2D),
                 (eph / Self.sigmasPer95Percent2D) * (eph / Self.sigmasPer95Percent2D), false)
            } else { nil }
        guard let horizontal else {
            positionCovariance = Array(repeating: 0, count: 9)
            positionCovarianceType = .unknown
            hasVerticalVariance = false
            return
        }
        positionCovariance = [horizontal.east, 0, 0, 0, horizontal.north, 0, 0, 0, up?.variance ?? Self.unknownVariance]
        positionCovarianceType = horizontal.measured && up?.measured == true ? .diagonalKnown : .approximated
        hasVerticalVariance = up != nil
    }

    /// A message saying there is no fix (ROS `STATUS_NO_FIX`): coordinates NaN-free zeros, covariance unknown.
    /// For a consumer that must publish at a fixed rate whether or not there is a fix.
    public static func noFix(at timestamp: Date? = nil, service: Service = .gps) -> NavSatFix {
        var message = NavSatFix(Location(coordinate: .init(latitude: 0, longitude: 0)), service: service)
        message.status = .noFix
        message.timestamp = timestamp
        message.altitude = nil
        return message
    }
}

extension NavSatFix {
    private enum CodingKeys: String, CodingKey {
        case timestamp, status, service, latitude, longitude, altitude, positionCovariance, positionCovarianceType
        case hasVerticalVariance
    }

    /// Reads a message as `Codable` wrote it, refusing one that cannot be true: a covariance that is not 3×3 or
    /// holds a negative variance, a latitude beyond ±90°, a longitude beyond ±180°, an altitude beyond -11 km to
    /// +1000 km, a time outside the years 1980 to 2099 (`DecodingError.dataCorrupted`, naming the key).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func refuse(_ key: CodingKeys, _ why: String) -> DecodingError {
            .dataCorruptedError(forKey: key, in: container, debugDescription: why)
        }
        func number(_ key: CodingKeys, _ range: ClosedRange<Double>) throws -> Double {
            let value = try container.decode(Double.self, forKey: key)
            guard range.contains(value) else { throw refuse(key, "\(value) is not a possible \(key.rawValue)") }
            return value
        }
        timestamp = try container.decodeIfPresent(Date.self, forKey: .timestamp)
        if let timestamp, !Plausibility.isPlausible(timestamp) {
            throw refuse(.timestamp, "\(timestamp.timeIntervalSince1970) s since 1970 is not a time from 1980 to 2099")
        }
        status = try container.decode(Status.self, forKey: .status)
        service = try container.decode(Service.self, forKey: .service)
        latitude = try number(.latitude, Plausibility.latitude)
        longitude = try number(.longitude, Plausibility.longitude)
        altitude = try container.decodeIfPresent(Double.self, forKey: .altitude)
        if let altitude, !Plausibility.altitude.contains(altitude) {
            throw refuse(.altitude, "\(altitude) is not a possible altitude")
        }
        let covariance = try container.decode([Double].self, forKey: .positionCovariance)
        guard covariance.count == 9 else {
            throw refuse(.positionCovariance, "\(covariance.count) elements, not the 9 of a 3×3 matrix")
        }
        guard covariance.allSatisfy(\.isFinite), [0, 4, 8].allSatisfy({ covariance[$0] >= 0 }) else {
            throw refuse(.positionCovariance, "a variance must be a finite number, 0 or more")
        }
        positionCovariance = covariance
        positionCovarianceType = try container.decode(CovarianceType.self, forKey: .positionCovarianceType)
        hasVerticalVariance = try container.decode(Bool.self, forKey: .hasVerticalVariance)
    }
}

extension NavSatFix.Status {
    /// gpsd's status in ROS's terms: DGPS (which gpsd reports for SBAS and ground DGPS alike) is SBAS; RTK is
    /// GBAS; every other fix is a plain fix.
    public init(_ status: Location.Status) {
        switch status {
        case .dgps: self = .sbasFix
        case .rtkFixed, .rtkFloat: self = .gbasFix
        case .gps, .deadReckoning, .gnssDeadReckoning, .timeOnly, .simulated, .precisePositioning: self = .fix
        }
    }
}
