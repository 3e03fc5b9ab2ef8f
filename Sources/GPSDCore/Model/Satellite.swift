/// One satellite a receiver sees, from gpsd's SKY report: which it is, where it is in the sky, how strong its
/// signal is and whether the fix uses it. The value Android's `GnssStatus` and Qt's `QGeoSatelliteInfo` give.
///
/// Values gpsd did not report are `nil`. gpsd does not say whether a receiver holds a satellite's almanac or
/// ephemeris, so neither is here.
///
/// ```swift
/// for await sky in gps.satelliteUpdates() {
///     for satellite in sky.satellites where satellite.isUsed {
///         print(satellite.constellation, satellite.id, satellite.signalStrength ?? 0, "dB-Hz")
///     }
/// }
/// ```
public struct Satellite: Sendable, Hashable, Codable {
    /// A satellite navigation system, as gpsd names it by its `gnssid` (u-blox's numbering).
    public enum Constellation: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
        /// GPS (United States).
        case gps = "GPS"
        /// A satellite-based augmentation system: WAAS, EGNOS, MSAS, GAGAN, …
        case sbas = "SBAS"
        /// Galileo (European Union).
        case galileo = "Galileo"
        /// BeiDou (China).
        case beidou = "BeiDou"
        /// IMES, the indoor messaging system (Japan): transmitters on the ground.
        case imes = "IMES"
        /// QZSS (Japan).
        case qzss = "QZSS"
        /// GLONASS (Russia).
        case glonass = "GLONASS"
        /// NavIC, formerly IRNSS (India).
        case navic = "NavIC"
        /// A system gpsd did not name, whose PRN is in no range the package knows.
        case unknown

        /// The name, as ``rawValue``: `GPS`, `Galileo`, …
        public var description: String { rawValue }

        /// gpsd's `gnssid` (u-blox's numbering: 0 GPS, 1 SBAS, 2 Galileo, 3 BeiDou, 4 IMES, 5 QZSS, 6 GLONASS,
        /// 7 NavIC); `nil` for a number that names none.
        package init?(gnssID: Int) {
            let systems: [Constellation] = [.gps, .sbas, .galileo, .beidou, .imes, .qzss, .glonass, .navic]
            guard systems.indices.contains(gnssID) else { return nil }
            self = systems[gnssID]
        }
    }

    /// Whether the satellite says it may be used, where the receiver reports it (gpsd's `health`).
    public enum Health: String, Sendable, Hashable, Codable, CaseIterable {
        /// The satellite reports itself healthy.
        case healthy
        /// The satellite reports itself unhealthy: a receiver should not use it.
        case unhealthy
    }

    /// The system the satellite belongs to.
    public var constellation: Constellation
    /// The satellite's number within its ``constellation`` (gpsd's `svid`: GPS 1–32, GLONASS 1–32, Galileo 1–36,
    /// BeiDou 1–63, SBAS 120–158, QZSS 1–10, …), or, for an ``Constellation/unknown`` one, its ``prn``.
    public var id: Int
    /// gpsd's PRN: one number across all systems (GPS 1–32, GLONASS 65–96, SBAS 120–158, or 33–64 as NMEA numbers
    /// them, QZSS 193–202, Galileo 301–336, BeiDou 401–437 in gpsd's numbering), as gpsd reports it; 0 where
    /// gpsd gave only the system and ``id``.
    public var prn: Int
    /// Degrees above the horizon, -90 to 90.
    public var elevation: Double?
    /// Degrees clockwise from true north, 0 up to 360.
    public var azimuth: Double?
    /// The carrier-to-noise density, C/N0, in dB-Hz; 0 for a satellite in view whose signal is not tracked.
    public var signalStrength: Double?
    /// Whether the receiver uses the satellite in its fix. An SBAS satellite may be marked used when the fix uses
    /// its corrections.
    public var isUsed: Bool
    /// The satellite's health, where the receiver reports it.
    public var health: Health?

    /// Makes a satellite: `Satellite(constellation: .galileo, id: 11, prn: 311, elevation: 40, azimuth: 120,
    /// signalStrength: 38, isUsed: true)`.
    public init(
        constellation: Constellation, id: Int, prn: Int, elevation: Double? = nil,
        azimuth: Double? = nil, signalStrength: Double? = nil, isUsed: Bool = false, health: Health? = nil
    ) {
        self.constellation = constellation
        self.id = id
        self.prn = prn
        self.elevation = elevation
        self.azimuth = azimuth
        self.signalStrength = signalStrength
        self.isUsed = isUsed
        self.health = health
    }

    /// The system and number of a satellite gpsd names only by its PRN (a gpsd older than 3.18, or a recording
    /// of one), by the ranges of gpsd's numbering; ``Constellation/unknown`` and the PRN itself outside them.
    ///
    /// ```swift
    /// Satellite.identity(prn: 311)   // (.galileo, 11)
    /// Satellite.identity(prn: 70)    // (.glonass, 6)
    /// ```
    public static func identity(prn: Int) -> (constellation: Constellation, id: Int) {
        switch prn {
        case 1...32: (.gps, prn)
        case 33...64: (.sbas, prn + 87)        // NMEA's SBAS numbers, 120–151
        case 65...96: (.glonass, prn - 64)
        case 120...158: (.sbas, prn)
        case 173...182: (.imes, prn - 172)
        case 193...202: (.qzss, prn - 192)
        case 301...336: (.galileo, prn - 300)
        case 401...463: (.beidou, prn - 400)
        default: (.unknown, prn)
        }
    }

    enum CodingKeys: String, CodingKey {
        case constellation, id, prn, elevation, azimuth, signalStrength, isUsed = "used", health
    }
}
