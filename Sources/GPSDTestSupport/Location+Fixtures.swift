import Foundation
package import GPSDLocation

extension Location {
    /// A 3D fix for tests: `second` seconds after a fixed epoch, moving east along the equator by
    /// `metresPerSecond`, with `accuracy` metres of horizontal error.
    package static func sample(
        second: Int, metresPerSecond: Double = 10, accuracy: Double? = 5, device: String? = "/dev/test"
    ) -> Location {
        Location(
            coordinate: .init(latitude: 0, longitude: Double(second) * metresPerSecond / 111_319.49),
            altitude: 50, ellipsoidalAltitude: 67, horizontalAccuracy: accuracy, verticalAccuracy: 8,
            speed: metresPerSecond, course: 90,
            timestamp: Date(timeIntervalSince1970: 1_748_779_200 + Double(second)),
            fix: .threeDimensional, status: .gps, device: device)
    }
}
