import Foundation
import GPSDLocation

/// One epoch's satellites of a fixture log, as `Scripts/make-fixtures.py` computed them from the NMEA it wrote
/// (`Tests/Fixtures/NAME.sky.expected.json`): what the NMEA means, which is not always what gpsd reports (the
/// script's usage lists where gpsd 3.22 differs).
package struct ExpectedSky: Decodable, Sendable {
    /// The epoch's time, as the fix's `time` in gpsd's ISO 8601.
    package var time: String
    package var visible: Int
    package var used: Int
    package var satellites: [ExpectedSatellite]

    /// The epochs of a fixture file, in order.
    package static func load(_ name: String) throws -> [ExpectedSky] {
        try JSONDecoder().decode([ExpectedSky].self, from: Data(contentsOf: Fixtures.url(name)))
    }
}

/// One satellite of an ``ExpectedSky``, in the log's order (gpsd keeps it).
package struct ExpectedSatellite: Decodable, Sendable {
    /// The name of a ``Satellite/Constellation``'s raw value: `GPS`, `GLONASS`, `Galileo`, …
    package var constellation: String
    package var id: Int
    package var prn: Int
    package var elevation: Double
    package var azimuth: Double
    /// C/N0 in dB-Hz; 0 where the log gave none (in view, not tracked).
    package var signal: Double
    package var used: Bool
}
