package import Foundation

/// NMEA 0183 sentences for logs made in tests: one receiver cycle at a time, with correct checksums.
package enum NMEA {
    /// One cycle of a receiver with a 3D fix at `time`: RMC, GGA and GSA (or GGA first, then RMC and GSA, as some
    /// receivers send them), with CRLF line ends.
    package static func epoch(
        time: Date, latitude: Double, longitude: Double, altitude: Double = 34.5, knots: Double = 5.8,
        course: Double = 90, ggaFirst: Bool = false
    ) -> String {
        let (clock, _) = clockAndDate(time)
        let (lat, ns) = degreesMinutes(latitude, width: 2, positive: "N", negative: "S")
        let (lon, ew) = degreesMinutes(longitude, width: 3, positive: "E", negative: "W")
        let rmc = Self.rmc(time: time, latitude: latitude, longitude: longitude, knots: knots, course: course)
        let gga = sentence("GPGGA,\(clock),\(lat),\(ns),\(lon),\(ew),1,08,1.0,\(String(format: "%.1f", altitude)),M,17.0,M,,")
        let gsa = sentence("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,2.0,1.0,1.5")
        return ggaFirst ? gga + rmc + gsa : rmc + gga + gsa
    }

    /// An RMC sentence with a fix at `time`, CRLF-ended. A receiver that sends only RMC has one sentence an
    /// epoch, and gpsd reports each as it reads it: a 2D fix (RMC has no altitude), one report an epoch.
    package static func rmc(time: Date, latitude: Double, longitude: Double, knots: Double = 5.8, course: Double = 90) -> String {
        let (clock, date) = clockAndDate(time)
        let (lat, ns) = degreesMinutes(latitude, width: 2, positive: "N", negative: "S")
        let (lon, ew) = degreesMinutes(longitude, width: 3, positive: "E", negative: "W")
        return sentence("GPRMC,\(clock),A,\(lat),\(ns),\(lon),\(ew),\(String(format: "%.1f", knots)),"
                        + "\(String(format: "%.1f", course)),\(date),,,A")
    }

    /// One cycle of a receiver without a fix at `time`: RMC void, GGA of quality 0, GSA of no fix.
    package static func noFixEpoch(time: Date) -> String {
        let (clock, date) = clockAndDate(time)
        return sentence("GPRMC,\(clock),V,,,,,,,\(date),,,N") + sentence("GPGGA,\(clock),,,,,0,00,99.99,,,,,,")
            + sentence("GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99")
    }

    /// `$body*XX` and CRLF, XX the XOR of the body's bytes.
    package static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }

    /// The UTC time of day (hhmmss.ss, to the hundredth) and date (ddmmyy) of `time`, as NMEA writes them.
    private static func clockAndDate(_ time: Date) -> (clock: String, date: String) {
        let hundredths = Int64((time.timeIntervalSince1970 * 100).rounded())
        var parts = tm()
        var seconds = time_t(hundredths / 100)
        gmtime_r(&seconds, &parts)
        return (String(format: "%02d%02d%02d.%02d", parts.tm_hour, parts.tm_min, parts.tm_sec, Int(hundredths % 100)),
                String(format: "%02d%02d%02d", parts.tm_mday, parts.tm_mon + 1, parts.tm_year % 100))
    }

    /// ddmm.mmmmmm (or dddmm.mmmmmm) and its hemisphere.
    private static func degreesMinutes(_ value: Double, width: Int, positive: String, negative: String) -> (String, String) {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        return (String(format: "%0\(width)d%09.6f", degrees, minutes), value < 0 ? negative : positive)
    }
}

extension NMEA {
    /// The tests' made-up drive: one receiver at 52.5° N moving east 0.0001° a second, an epoch a second from
    /// 2025-06-01T12:00:00Z. Logs cut from it (a segment, a restart's second half) join into one track.
    package enum Track {
        package static let start = Date(timeIntervalSince1970: 1_748_779_200)

        /// The time of the epoch at `second`.
        package static func time(_ second: Int) -> Date { start.addingTimeInterval(Double(second)) }

        /// The longitude of the epoch at `second` (as NMEA writes it: compare within 1e-6°).
        package static func longitude(_ second: Int) -> Double { 13.4 + Double(second) * 0.0001 }

        /// The track's first `count` epochs (3D fixes) dated from `start` on instead: a log of a receiver whose time
        /// is far from the system clock's, say.
        package static func epochs(_ count: Int, from start: Date) -> [String] {
            (0..<count).map {
                NMEA.epoch(time: start.addingTimeInterval(Double($0)), latitude: 52.5, longitude: longitude($0))
            }
        }

        /// A year after `date` (by default now, by the system clock), to the second below.
        package static func aYear(after date: Date = Date()) -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let later = calendar.date(byAdding: .year, value: 1, to: date) ?? date.addingTimeInterval(365 * 86_400)
            return Date(timeIntervalSince1970: later.timeIntervalSince1970.rounded(.down))
        }

        /// The epoch at `second`: a 3D fix, or with `noFix` a cycle of the receiver without one.
        package static func epoch(_ second: Int, noFix: Bool = false, ggaFirst: Bool = false) -> String {
            noFix ? noFixEpoch(time: time(second))
                : NMEA.epoch(time: time(second), latitude: 52.5, longitude: longitude(second), ggaFirst: ggaFirst)
        }
    }
}
