/// What the fleet's two ends refuse.
public enum FleetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A vehicle name that cannot be one MQTT topic level (``VehicleID``).
    case invalidVehicle(String)
    /// A fix that cannot be sent: no calendar time, or a non-finite position.
    case unsendableFix(String)
    /// A queue identity that is not 16 lowercase hexadecimal digits (``QueueID``).
    case invalidQueue(String)

    public var description: String {
        switch self {
        case .invalidVehicle(let name):
            "not a vehicle name: \(name.debugDescription) (1 to \(VehicleID.maximumLength) of A-Z a-z 0-9 . _ -)"
        case .unsendableFix(let reason):
            "the fix cannot be sent: \(reason)"
        case .invalidQueue(let text):
            "not a queue identity: \(text.debugDescription) (16 of 0-9 a-f)"
        }
    }
}
