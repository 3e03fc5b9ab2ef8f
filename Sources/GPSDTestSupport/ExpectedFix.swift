package import Foundation
import GPSDLocation

/// One fix of a fixture log, as `Scripts/make-fixtures.py` computed it from the NMEA it wrote
/// (`Tests/Fixtures/NAME.expected.json`).
package struct ExpectedFix: Decodable, Sendable {
    package var time: String
    package var latitude: Double
    package var longitude: Double
    package var altitudeMSL: Double?
    package var speed: Double?
    package var course: Double?
    package var mode: Int
    /// The 1-sigma errors of the epoch's $GPGST, in metres, if it had one.
    package var deviation: Deviation?

    package struct Deviation: Decodable, Sendable {
        package var latitude: Double
        package var longitude: Double
        package var altitude: Double
    }

    /// The fixes of a fixture file, in order.
    package static func load(_ name: String) throws -> [ExpectedFix] {
        try JSONDecoder().decode([ExpectedFix].self, from: Data(contentsOf: Fixtures.url(name)))
    }

    /// ``time`` as a `Date`.
    package var date: Date { GPSDTime.date(from: time)! }
}
