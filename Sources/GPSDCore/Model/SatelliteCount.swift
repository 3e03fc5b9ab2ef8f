/// Satellites a receiver sees and uses, from gpsd's SKY reports.
///
/// ```swift
/// for await sky in gps.satelliteUpdates() { print("\(sky.used) of \(sky.visible) satellites used") }
/// ```
public struct SatelliteCount: Sendable, Hashable, Codable {
    /// Satellites in view, at least ``used``: when gpsd's count of them is missing (libgps 3.25 with a receiver
    /// that reports the satellites it uses but not those it sees), the count used.
    public var visible: Int
    /// Satellites used in the fix.
    public var used: Int

    /// Makes a count: `SatelliteCount(visible: 11, used: 8)`.
    public init(visible: Int, used: Int) {
        self.visible = visible
        self.used = used
    }
}
