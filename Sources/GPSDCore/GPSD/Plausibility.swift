package import FoundationEssentials
import Glibc

/// Something gpsd sent that cannot be true, or that libgps cannot hold, found while decoding one report.
package struct ReportProblem: Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case latitude = "a latitude beyond ±90°"
        case longitude = "a longitude beyond ±180°"
        case time = "a time that is not a calendar time"
        case altitude = "an altitude beyond -11 km to +1000 km"
        case speed = "a speed beyond 0 to 12 km/s"
        case climb = "a climb beyond ±12 km/s"
        case course = "a course beyond 0° to 360°"
        case accuracy = "an error estimate that is negative or absurd"
        case baseline = "an RTK baseline longer than the Earth is wide"
        case satellites = "a count of satellites that is negative or absurd"
        case satellite = "a satellite whose number is absurd"
        case elevation = "a satellite's elevation beyond ±90°"
        case azimuth = "a satellite's azimuth beyond 0° to 360°"
        case signal = "a satellite's signal beyond 0 to 254 dB-Hz"
        case dilution = "a dilution of precision that is negative or absurd"
        case heading = "a heading beyond 0° to 360°"
        case attitude = "a pitch beyond ±90° or a roll beyond ±180°"
        case magneticVariation = "a magnetic variation beyond ±180°"
        /// Not a value that cannot be true: a SKY whose list is longer than libgps's array (`MAXCHANNELS`: 140 up
        /// to gpsd 3.25, 184 from 3.26). The view keeps the satellites libgps holds and the list's counts.
        case truncatedSky = "a SKY listing more satellites than libgps holds"
    }

    package var kind: Kind
    /// What gpsd sent, for the log.
    package var value: String

    /// `value` is kept with every character that is not `Unicode.Scalar.isPrintable` escaped (`\u{1B}`): it
    /// goes to logs, and a terminal showing one must not obey what a peer sent.
    package init(_ kind: Kind, _ value: String) {
        self.kind = kind
        self.value = value.unicodeScalars.allSatisfy(\.isPrintable) ? value
            : value.unicodeScalars.map { $0.isPrintable ? String($0) : $0.escaped(asASCII: true) }.joined()
    }

    /// Whether the whole fix is dropped (its position cannot be true); otherwise only the value is.
    package var dropsFix: Bool { kind == .latitude || kind == .longitude }

    /// What becomes of the report, for the log: its fix dropped, a value left out, or (a SKY too long for libgps)
    /// the satellites past libgps's array left out.
    package var consequence: String {
        switch kind {
        case .latitude, .longitude: "the fix is dropped"
        case .truncatedSky: "the satellites past libgps's array are left out, the counts are the list's"
        default: "the value is left out"
        }
    }

    package var description: String { "\(kind.rawValue) (\(value))" }
}

/// The ranges a value of a fix must be in to be possible, generous enough for anything that moves on, under or
/// above the earth with a GNSS receiver (a submarine, an aircraft, a satellite in low orbit), and tight enough
/// that garbage (`1e308`, a negative speed) never reaches a user.
package enum Plausibility {
    package static let latitude = -90.0...90.0
    package static let longitude = -180.0...180.0
    /// Metres: the deepest ocean to low earth orbit.
    static let altitude = -11_000.0...1_000_000.0
    /// Metres per second: faster than anything in orbit.
    static let speed = 0.0...12_000.0
    static let climb = -12_000.0...12_000.0
    /// Degrees; 360 is read as 0.
    static let course = 0.0...360.0
    /// An RTK baseline's east, north or up part, in metres: no farther than the Earth's diameter.
    static let baselineComponent = -12_760_000.0...12_760_000.0
    static let baselineLength = 0.0...12_760_000.0
    /// Metres, for horizontal and vertical error estimates.
    static let positionError = 0.0...1_000_000.0
    /// Metres per second, for speed and climb error estimates.
    static let speedError = 0.0...12_000.0
    /// Degrees, for the course error estimate.
    static let courseError = 0.0...360.0
    /// Degrees clockwise from north, true or magnetic, for an ATT's heading; 360 is read as 0.
    static let heading = 0.0...360.0
    /// Degrees nose up or down: level is 0, straight up 90 (u-blox's HNR-ATT and ESF-ALG give pitch so).
    package static let pitch = -90.0...90.0
    /// Degrees either way round the vehicle's long axis.
    package static let roll = -180.0...180.0
    /// Degrees, east positive: magnetic north is at most half a turn from true north.
    static let magneticVariation = -180.0...180.0
    /// Satellites a receiver can see (or use) at once: more than all four global constellations have in orbit.
    package static let satellites = 0...255
    /// Degrees above the horizon, for a satellite's elevation.
    static let elevation = -90.0...90.0
    /// Degrees from true north, for a satellite's azimuth; 360 is read as 0.
    static let azimuth = 0.0...360.0
    /// dB-Hz, for a satellite's C/N0: gpsd's own bound (254; u-blox receivers report up to 63).
    static let signal = 0.0...254.0
    /// gpsd's PRNs (1–437 in its numbering) and the svids of every constellation fit well within this.
    static let satelliteNumber = 1...1023
    /// A dilution of precision: at least 0 (a real one at least about 0.5), and gpsd's own ceiling for one it
    /// computes is 99.99; a receiver's own can be larger, not this large.
    static let dilution = 0.0...10_000.0
    /// The years a GNSS fix can be dated in: GPS time begins in 1980.
    static let years = 1980...2099

    /// `value` if it was sent and is possible; `nil` if it was not sent, and `nil` with a problem if it cannot be.
    static func check(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind,
                      into problems: inout [ReportProblem]) -> Double? {
        if value.isNaN { return nil }
        guard value.isFinite, range.contains(value) else {
            problems.append(ReportProblem(kind, "\(value)"))
            return nil
        }
        return value
    }

    /// Whether `text` is a real calendar time in gpsd's format, `2025-06-01T12:00:05.000Z` (a fraction of up to
    /// nine digits optional):
    /// libgps turns a time like `2024-13-45T99:99:99Z` into a real but wrong one, so it is checked as sent.
    static func isCalendarTime(_ text: Substring) -> Bool {
        var text = text
        return text.withUTF8(isCalendarTime(_:))
    }

    /// ``isCalendarTime(_:)`` of the text's bytes; allocates nothing (it runs for every TPV).
    static func isCalendarTime(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return false }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard isDigit(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return false }
        if bytes.count > 20 {
            // 1 to 9 digits (a timespec's nanoseconds, and what Foundation's ISO 8601 parser takes), checked as
            // digits only: a longer fraction is refused, not summed.
            guard bytes[19] == UInt8(ascii: "."), (22...30).contains(bytes.count),
                  bytes[20..<(bytes.count - 1)].allSatisfy(isDigit)
            else { return false }
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = switch month {
        case 2: leap ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
        return years.contains(year) && (1...12).contains(month) && (1...days).contains(day)
            && hour < 24 && minute < 60 && second <= 60
    }

    /// The first text of a `time` member of a report, as sent, that is not a calendar time (``isCalendarTime(_:)``),
    /// `nil` if every one is: libgps takes the last of several. Found as leniently as libgps finds them: its parser
    /// also takes `"time""…"`, and any white space (CR, form feed, …) around the colon. Allocates nothing unless it
    /// finds one.
    static func firstTimeTextNotACalendarTime<Bytes: Collection<UInt8>>(in line: Bytes) -> String? {
        // Over the bytes: on every report's path, where Foundation's string search cost more than libgps's parse.
        if let found = line.withContiguousStorageIfAvailable(firstTimeTextNotACalendarTime(in:)) { return found }
        return Array(line).withUnsafeBufferPointer(firstTimeTextNotACalendarTime(in:))
    }

    private static func firstTimeTextNotACalendarTime(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        while index + 6 <= bytes.count {
            // "time"
            guard bytes[index] == 0x22, bytes[index + 1] == 0x74, bytes[index + 2] == 0x69, bytes[index + 3] == 0x6D,
                  bytes[index + 4] == 0x65, bytes[index + 5] == 0x22 else {
                index += 1
                continue
            }
            var start = index + 6
            // isspace(3), and ':'
            while start < bytes.count, bytes[start] == UInt8(ascii: ":") || bytes[start] == 0x20 || (0x09...0x0D).contains(bytes[start]) {
                start += 1
            }
            index = start
            guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { continue }
            start += 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if !isCalendarTime(text) { return String(decoding: text, as: UTF8.self) }
            index = end
        }
        return nil
    }

    /// Whether a time (libgps's, or a decoded one) is in a year a GNSS fix can be dated in, whatever text it came
    /// from: from 1980-01-01T00:00:00Z to the end of 2099, but for its last half millisecond, which gpsd's format
    /// (``GPSDTime/string(from:)``, to the millisecond) would write as 2100 (found by Scripts/fuzz json). Compared
    /// as seconds, so any `Date` will do (NaN and infinities are not plausible).
    package static func isPlausible(_ date: Date) -> Bool {
        secondsOfYears.contains(date.timeIntervalSince1970)
    }

    /// Why `location` cannot be true, naming the first value outside its range, or `nil`: what every fix the
    /// decoder or `JSONDecoder` makes passes (the fuzz targets and the tests hold them to it). A timestamp need not
    /// be there; one that is must be plausible.
    package static func impossibility(of location: Location) -> String? {
        let ranges: [(String, Double?, ClosedRange<Double>)] = [
            ("latitude", location.coordinate.latitude, latitude), ("longitude", location.coordinate.longitude, longitude),
            ("altitude", location.altitude, altitude), ("ellipsoidal altitude", location.ellipsoidalAltitude, altitude),
            ("speed", location.speed, speed), ("climb", location.climb, climb),
            ("course", location.course, 0...359.999_999_999),
            ("horizontal accuracy", location.horizontalAccuracy, positionError),
            ("vertical accuracy", location.verticalAccuracy, positionError),
            ("latitude accuracy", location.latitudeAccuracy, positionError),
            ("longitude accuracy", location.longitudeAccuracy, positionError),
            ("latitude deviation", location.deviation?.latitude, positionError),
            ("longitude deviation", location.deviation?.longitude, positionError),
            ("altitude deviation", location.deviation?.altitude, positionError),
            ("baseline east", location.baseline?.east, baselineComponent),
            ("baseline north", location.baseline?.north, baselineComponent),
            ("baseline up", location.baseline?.up, baselineComponent),
            ("baseline length", location.baseline?.length, baselineLength),
            ("baseline course", location.baseline?.course, 0...359.999_999_999),
            ("speed accuracy", location.speedAccuracy, speedError),
            ("course accuracy", location.courseAccuracy, courseError),
        ]
        for (name, value, range) in ranges {
            if let value, !(value.isFinite && range.contains(value)) { return "\(name) \(value)" }
        }
        if !isPlausible(location.timestamp) {
            return "time \(location.timestamp.timeIntervalSince1970) s since 1970"
        }
        return nil
    }

    /// What cannot be true in a view of the sky (the fuzzers' check of the decoder): a count, a satellite's
    /// number or value, a DOP or the time out of its range; `nil` if all is possible.
    package static func impossibility(of view: SkyView) -> String? {
        guard satellites.contains(view.visible), (0...view.visible).contains(view.used), view.satellites.count <= view.visible
        else { return "counts \(view.used) of \(view.visible), \(view.satellites.count) listed" }
        let dilution = view.dilution
        for value in [dilution.horizontal, dilution.vertical, dilution.position, dilution.time, dilution.geometric,
                      dilution.longitude, dilution.latitude] {
            if let value, !(value.isFinite && Self.dilution.contains(value)) { return "dilution \(value)" }
        }
        for satellite in view.satellites {
            guard satelliteNumber.contains(satellite.id), satellite.prn == 0 || satelliteNumber.contains(satellite.prn)
            else { return "satellite \(satellite)" }
            let ranges: [(String, Double?, ClosedRange<Double>)] = [
                ("elevation", satellite.elevation, elevation), ("azimuth", satellite.azimuth, 0...359.999_999_999),
                ("signal", satellite.signalStrength, signal),
            ]
            for (name, value, range) in ranges {
                if let value, !(value.isFinite && range.contains(value)) { return "\(name) \(value)" }
            }
        }
        if let time = view.timestamp, !isPlausible(time) { return "time \(time.timeIntervalSince1970) s since 1970" }
        return nil
    }

    /// ``years`` in seconds since 1970, less the last half millisecond (see ``isPlausible(_:)``).
    static let secondsOfYears = 315_532_800.0..<4_102_444_799.999_5
}
