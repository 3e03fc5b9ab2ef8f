public import FleetCore
public import FoundationEssentials

/// One stored fix: a row of the table `fixes`, as ``FixStore/track(of:from:to:)`` and
/// ``FixStore/vehicles(inBoxSouth:west:north:east:at:)`` return it. Values the fix did not have are nil.
public struct StoredFix: Sendable, Equatable {
    /// The vehicle that measured the fix.
    public var vehicle: VehicleID
    /// Its sequence number on that vehicle.
    public var seq: Int64
    /// The fix's own time (the location's `timestamp`), to the microsecond.
    public var time: Date
    /// Degrees north, WGS84.
    public var latitude: Double
    /// Degrees east, WGS84.
    public var longitude: Double
    /// Metres above mean sea level; nil when the fix had none (the position's Z is then 0).
    public var altitude: Double?
    /// Estimated horizontal error in metres.
    public var horizontalAccuracy: Double?
    /// Estimated vertical error in metres.
    public var verticalAccuracy: Double?
    /// Speed over ground in metres per second.
    public var speed: Double?
    /// Course over ground in degrees from true north.
    public var course: Double?
    /// Vertical speed in metres per second.
    public var climb: Double?
    /// `2D` or `3D`.
    public var fix: String
    /// How the fix was obtained: `gps`, `dgps`, `rtkFixed`, …
    public var status: String

    public init(vehicle: VehicleID, seq: Int64, time: Date, latitude: Double, longitude: Double, altitude: Double?,
                horizontalAccuracy: Double?, verticalAccuracy: Double?, speed: Double?, course: Double?,
                climb: Double?, fix: String, status: String) {
        self.vehicle = vehicle
        self.seq = seq
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.climb = climb
        self.fix = fix
        self.status = status
    }
}

/// What ``FixStore`` refuses or could not do.
public enum FixStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database URL is not `postgresql://user[:password]@host[:port]/database`; the reason says which part.
    case invalidURL(String)
    /// The database returned a row that is not a fix (a vehicle name that cannot be one).
    case invalidRow(String)
    /// The table is not ready for this role: missing, made before the queue was in its key, or not granted INSERT
    /// and SELECT. An owner prepares it: `fleet-ingest --prepare` (``FixStore/prepare(grantingTo:)``).
    case notPrepared(String)

    public var description: String {
        switch self {
        case .invalidURL(let reason):
            "not a database URL (postgresql://user[:password]@host[:port]/database): \(reason)"
        case .invalidRow(let reason):
            "the database returned a row that is not a fix: \(reason)"
        case .notPrepared(let reason):
            "the table fixes is not ready: \(reason); an owner prepares it with fleet-ingest --prepare"
        }
    }
}
