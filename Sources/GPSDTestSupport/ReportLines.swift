import Foundation
import GPSDLocation

/// gpsd JSON reports as gpsd 3.22 writes them, for fake peers and recordings in tests.
package enum ReportLines {
    /// 2025-06-01T12:00:00Z.
    package static let epoch = 1_748_779_200.0

    /// gpsd's time for `second` seconds after ``epoch``: `2025-06-01T12:00:05.000Z`.
    package static func time(_ second: Int) -> String {
        GPSDTime.string(from: Date(timeIntervalSince1970: epoch + Double(second)))!
    }

    /// A 3D fix `second` seconds after the epoch, moving east from 52.5°N 13.4°E, with `extra` members added.
    package static func tpv(second: Int, latitude: Double = 52.5, longitude: Double? = nil, extra: String = "") -> String {
        let lon = longitude ?? 13.4 + Double(second) * 0.0001
        return #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"\#(time(second))","ept":0.005,"#
            + #""lat":\#(latitude),"lon":\#(lon),"altHAE":80.5,"altMSL":40.25,"eph":6.5,"epv":9.5,"#
            + #""track":90.0,"speed":7.0,"climb":0.0"# + (extra.isEmpty ? "" : "," + extra) + "}"
    }

    /// A TPV without a fix.
    package static let noFix = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":1}"#

    /// The DEVICES report of a gpsd with one receiver.
    package static let devices = #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyUSB0","#
        + #""driver":"NMEA0183","activated":"2025-06-01T12:00:00.000Z","flags":1,"native":0,"bps":4800,"#
        + #""parity":"N","stopbits":1,"cycle":1.00}]}"#
}
