import Foundation
package import GPSDLocation

/// What gpsd 3.22 sent for `multignss.nmea` (`Tests/Fixtures/multignss.gpsd.json`).
package enum MultiGNSSRecording {
    /// The satellites of each epoch's last SKY: all of GPS, GLONASS, Galileo and BeiDou.
    package static let satellitesInView = 26

    /// The recording's SKY lines, in order, without their line ends.
    package static func skyLines() throws -> [String] {
        let text = try String(contentsOf: Fixtures.url("multignss.gpsd.json"), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).map(String.init).filter { $0.hasPrefix(#"{"class":"SKY""#) }
    }

    /// Each epoch's last SKY (the one with every system's satellites), decoded, in order.
    package static func completeViews() throws -> [SkyView] {
        let decoder = try ReportDecoder()
        return try skyLines().compactMap { line -> SkyView? in
            guard case .sky(let view, _)? = decoder.decode(Array(line.utf8)) else { return nil }
            return view.satellites.count == satellitesInView ? view : nil
        }
    }
}
