public import FoundationEssentials

/// The satellites a receiver sees in one epoch: each ``Satellite``, the counts (in all, and per system:
/// ``constellations``), and the dilution of precision of the geometry it uses.
///
/// The manager gives one whole view per receiver epoch, gathered from gpsd's SKY reports, which come a system at
/// a time: the epoch's last list, the newest of each DOP its SKYs gave, stamped with the epoch's time (the
/// SKYs', or else its fixes'). The rule of when an epoch is whole is in
/// ``AsyncLocationManager/satelliteUpdates()``. A view with no satellites and counts 0 says that the receiver
/// went or lost its fix.
///
/// The counts are those of gpsd's list as sent, even when libgps holds fewer satellites than gpsd listed
/// (``isTruncated``).
///
/// ```swift
/// for await sky in gps.satelliteUpdates() {
///     print("\(sky.used)/\(sky.visible) satellites, HDOP", sky.dilution.horizontal ?? .nan)
///     for system in sky.constellations { print(" \(system.constellation): \(system.used)/\(system.visible)") }
/// }
/// ```
public struct SkyView: Sendable, Hashable, Codable {
    /// Every satellite in the report, in gpsd's order; when ``isTruncated``, the first ones, as many as libgps
    /// holds.
    public var satellites: [Satellite]
    /// Satellites in view: the number gpsd listed (the whole list, also when ``isTruncated``), and at least
    /// ``used``. A SKY without a list gives libgps's count.
    public var visible: Int
    /// Satellites used in the fix: those gpsd's list marks used (the whole list's, also when ``isTruncated``). A
    /// SKY without a list gives libgps's count (gpsd's `uSat` from libgps 3.25 on). Where gpsd also sent `nSat`
    /// and `uSat`, the list wins: it is what can be checked, and gpsd writes them from it.
    public var used: Int
    /// Whether gpsd listed more satellites than libgps holds (its `MAXCHANNELS`: 140 up to gpsd 3.25, 184 from
    /// 3.26), as a newer gpsd, or another server, can: ``satellites`` then holds only the first ones, while
    /// ``visible`` and ``used`` count the whole list. Each such report is counted in
    /// ``ReportStatistics/truncatedSkies``.
    ///
    /// ```swift
    /// if sky.isTruncated { print("showing \(sky.satellites.count) of \(sky.visible) satellites") }
    /// ```
    public var isTruncated: Bool
    /// How the geometry of the satellites used multiplies the receiver's ranging error.
    public var dilution: DilutionOfPrecision
    /// The epoch's time: the SKYs' own, or else that of the receiver's fixes the SKYs came after; `nil` for a
    /// receiver that gave neither.
    public var timestamp: Date?
    /// The receiver that reported it (gpsd's device path), if gpsd named one.
    public var device: String?

    /// The counts alone, as ``LocationStatus/waitingForFix(satellites:)`` carries them.
    public var count: SatelliteCount { SatelliteCount(visible: visible, used: used) }

    /// Makes a view; `visible` and `used` default to what `satellites` lists. `isTruncated` says that
    /// `satellites` are only the first of a longer list, which `visible` and `used` count.
    public init(
        satellites: [Satellite], visible: Int? = nil, used: Int? = nil, dilution: DilutionOfPrecision = .init(),
        timestamp: Date? = nil, device: String? = nil, isTruncated: Bool = false
    ) {
        let listedUsed = satellites.count(where: \.isUsed)
        self.satellites = satellites
        self.used = used ?? listedUsed
        self.visible = max(visible ?? 0, satellites.count, self.used)
        self.dilution = dilution
        self.timestamp = timestamp
        self.device = device
        self.isTruncated = isTruncated
    }
}

/// Dilution of precision: dimensionless factors by which the geometry of the satellites used multiplies the
/// receiver's ranging error into an error of position or time. Lower is better; under 2 is good, over 10 poor.
/// A factor the receiver and gpsd did not give is `nil`.
public struct DilutionOfPrecision: Sendable, Hashable, Codable {
    /// Horizontal (HDOP).
    public var horizontal: Double?
    /// Vertical (VDOP).
    public var vertical: Double?
    /// Of the position in three dimensions (PDOP).
    public var position: Double?
    /// Of the time (TDOP).
    public var time: Double?
    /// Of position and time together (GDOP).
    public var geometric: Double?
    /// East–west, along the longitude (XDOP).
    public var longitude: Double?
    /// North–south, along the latitude (YDOP).
    public var latitude: Double?

    /// Makes the factors: `DilutionOfPrecision(horizontal: 0.9, vertical: 1.4, position: 1.7)`.
    public init(
        horizontal: Double? = nil, vertical: Double? = nil, position: Double? = nil, time: Double? = nil,
        geometric: Double? = nil, longitude: Double? = nil, latitude: Double? = nil
    ) {
        self.horizontal = horizontal
        self.vertical = vertical
        self.position = position
        self.time = time
        self.geometric = geometric
        self.longitude = longitude
        self.latitude = latitude
    }

    private enum CodingKeys: String, CodingKey {
        case horizontal = "hdop", vertical = "vdop", position = "pdop", time = "tdop", geometric = "gdop"
        case longitude = "xdop", latitude = "ydop"
    }
}
