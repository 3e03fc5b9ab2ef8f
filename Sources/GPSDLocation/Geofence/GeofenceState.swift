/// Where a fix puts the receiver relative to a ``GeofenceRegion``, as a ``GeofenceMonitor`` decided it.
///
/// ```swift
/// if monitor.state(of: "home") == .inside { print("welcome home") }
/// ```
public enum GeofenceState: String, Sendable, Codable {
    /// No fix has decided it yet: none came since the region was added, or none was accurate enough.
    case unknown
    /// A fix put the receiver inside the region, with its whole accuracy circle.
    case inside
    /// A fix put the receiver outside the region, with its whole accuracy circle.
    case outside
}
