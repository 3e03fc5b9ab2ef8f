/// A vehicle's name in the fleet: the `<vehicle>` of its topics and the first half of each fix's dedupe key.
///
/// One to 64 characters from `A`–`Z`, `a`–`z`, `0`–`9`, `.`, `_` and `-`, so that it is one MQTT topic level (no
/// `/`, no wildcard `+` or `#`), a file name and a database value as it is.
///
/// ```swift
/// let robot = try VehicleID("robot-7")
/// print(FleetTopic.fix(robot))   // fleet/robot-7/fix
/// ```
public struct VehicleID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as given.
    public let rawValue: String

    /// The longest name, in characters.
    public static let maximumLength = 64

    /// A vehicle's name, or ``FleetError/invalidVehicle(_:)`` for one that cannot be a topic level.
    public init(_ rawValue: String) throws(FleetError) {
        guard Self.isValid(rawValue) else { throw .invalidVehicle(rawValue) }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: VehicleID, rhs: VehicleID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `text` can name a vehicle.
    public static func isValid(_ text: some StringProtocol) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}

/// The topics of a fleet. Every vehicle has three:
/// - `fleet/<vehicle>/fix`: each fix once, in order, at QoS 1 (what the ingest stores);
/// - `fleet/<vehicle>/state`: the newest fix, retained (what a map shows);
/// - `fleet/<vehicle>/status`: `online` or `offline`, retained, `offline` being the uplink's last will.
public enum FleetTopic {
    /// The topic of `vehicle`'s fixes.
    public static func fix(_ vehicle: VehicleID) -> String { "fleet/\(vehicle.rawValue)/fix" }
    /// The topic of `vehicle`'s newest fix, retained.
    public static func state(_ vehicle: VehicleID) -> String { "fleet/\(vehicle.rawValue)/state" }
    /// The topic of `vehicle`'s connection, `online` or `offline`, retained.
    public static func status(_ vehicle: VehicleID) -> String { "fleet/\(vehicle.rawValue)/status" }
    /// Every vehicle's fixes: what the ingest subscribes to.
    public static let allFixes = "fleet/+/fix"

    /// The vehicle a fix topic names (`fleet/<vehicle>/fix`), or nil for any other topic.
    public static func vehicle(inFixTopic topic: some StringProtocol) -> VehicleID? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[0] == "fleet", levels[2] == "fix" else { return nil }
        return try? VehicleID(String(levels[1]))
    }
}
