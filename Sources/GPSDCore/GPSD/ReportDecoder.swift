import CGPS
import FoundationEssentials

// The C boundary: every libgps call GPSDLocation makes is in this file. libgps parses each report
// (`gps_unpack`) into a `gps_data_t` of the decoder's own, which the shim copies into plain values.

/// Parses gpsd JSON reports with libgps's own parser (`gps_unpack`).
///
/// Not thread-safe: one decoder per thread. The `gps_data_t` it parses into is its own.
package final class ReportDecoder {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var report = cgps_report()

    /// What the last ``decode(_:)`` found that cannot be true: values it left out of the report, or the reason
    /// it dropped a fix (the report is then ``GPSDReport/other``).
    package private(set) var problems: [ReportProblem] = []
    /// What an ATT takes from each receiver's newest TPV (keyed by device path, "" for none): its time and gpsd's
    /// magnetic variation. At most ``maximumReceivers``.
    private var newestTPVs: [String: (time: Date?, magneticVariation: Double?)] = [:]
    /// The most receivers whose newest TPV is kept for their ATTs: more are forgotten all at once.
    static let maximumReceivers = 16
    /// The copy of the line libgps parses, kept from one report to the next so that decoding allocates nothing.
    private var scratch: [CChar] = []

    /// - Throws: ``LocationError/Code/resourceUnavailable`` if the memory for libgps's `gps_data_t` cannot be
    ///   had.
    package init() throws(LocationError) {
        guard let data = cgps_alloc() else {
            throw LocationError(.resourceUnavailable, "cannot allocate libgps's gps_data_t", errorNumber: ENOMEM)
        }
        self.data = data
    }

    deinit { cgps_free(data) }

    /// The libgps API the package was built against (gpsd 3.22: 11, 3.25: 14, 3.27: 16). What it parses
    /// depends on it: RTK baselines only from 13 on, for one.
    package static var libgpsAPIVersion: Int { Int(cgps_api_major_version()) }

    /// Whether the libgps the package was built against reads an ATT's magnetic heading (`mheading`, gpsd 3.25
    /// and later); without it a ``Heading/magneticHeading`` comes only from a TPV's magnetic variation.
    package static var libgpsReadsMagneticHeading: Bool { cgps_reads_magnetic_heading() }

    /// The most satellites of one SKY the libgps the package was built against holds (its `MAXCHANNELS`: 140 up
    /// to gpsd 3.25, 184 from 3.26): a longer list makes a ``SkyView/isTruncated`` view.
    package static var libgpsSkyviewCapacity: Int { Int(cgps_skyview_capacity()) }

    /// The bytes the last ``decode(_:)`` handed to libgps and walked itself: a measure of its work, which grows
    /// with the line's length and no faster, however the line nests (a test holds it to that).
    package private(set) var bytesExamined = 0

    /// Decodes one JSON line (without its newline). `nil` if it is not a gpsd report.
    package func decode<Bytes: Collection<UInt8>>(_ line: Bytes) -> GPSDReport? {
        problems.removeAll(keepingCapacity: true)
        bytesExamined = 0
        return decode(line, onlyTPV: false)
    }

    /// One report; with `onlyTPV` (an element of a POLL's `tpv` list) anything but a TPV is `nil`, so that a
    /// POLL nested in a POLL is not decoded again at every depth.
    private func decode<Bytes: Collection<UInt8>>(_ line: Bytes, onlyTPV: Bool) -> GPSDReport? {
        bytesExamined += 3 * line.count   // copied, and walked: once, a satellites array not of flat objects twice
        // gps_unpack wants a writable, NUL-terminated C string: copied into the scratch buffer, taken out for the
        // time it is in use (a POLL's TPVs, decoded meanwhile, get one of their own).
        var bytes = scratch
        scratch = []
        defer {
            bytes.removeAll(keepingCapacity: true)
            scratch = bytes
        }
        bytes.reserveCapacity(line.count + 1)
        // From contiguous bytes in one copy; a generic sequence (`repeatElement`, say) instantiates its metadata on
        // every session's thread at once, which ThreadSanitizer's runtime has been seen to deadlock on.
        if line.withContiguousStorageIfAvailable({ $0.withMemoryRebound(to: CChar.self) { bytes.append(contentsOf: $0) } }) == nil {
            for byte in line { bytes.append(CChar(bitPattern: byte)) }
        }
        bytes.append(0)
        // A report is one whole JSON object whose first member is its class, as gpsd writes every report. libgps's
        // parser accepts a line cut off anywhere (a recording whose writer died), and loops for ever on some that
        // are not JSON, or whose first "class" is not the report's, or that hold objects or arrays where it
        // expects none: it gets only the reports the package reads, in the shapes gpsd sends them.
        let shape = bytes.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: UInt8.self) { JSONScan.reportShape(UnsafeBufferPointer(rebasing: $0.dropLast())) }
        }
        guard let shape, !onlyTPV || shape.className == "TPV" else { return nil }
        switch shape.className {
        case "TPV", "GST", "VERSION", "DEVICE", "ERROR", "ATT":
            guard shape.isFlat, shape.namesFit else { return nil }
        case "SKY":
            guard shape.nestsOnlySatellites, shape.namesFit else { return nil }
        case "POLL": return pollReport(line)
        case "DEVICES":
            let devices = devicesReport(line)
            if case .devices(count: 0)? = devices { forgetTimeForAttitude(of: nil) }
            return devices
        default: return .other   // a class the package does not read (WATCH, ATT, PPS, …)
        }
        let result = bytes.withUnsafeMutableBufferPointer { cgps_unpack($0.baseAddress, data, &report) }
        guard result >= 0 else { return nil }
        switch report.report_class {
        case CGPS_CLASS_TPV:
            let tpv = tpvReport(notATime: notATime(line, shape))
            if !onlyTPV { noteForAttitude(tpv) }
            return tpv
        case CGPS_CLASS_ATT:
            return attitudeReport(notATime: notATime(line, shape))
        case CGPS_CLASS_SKY:
            return skyReport(list: shape.satelliteList, notATime: notATime(line, shape))
        case CGPS_CLASS_VERSION: return .version(messageText())
        case CGPS_CLASS_DEVICE:
            let path = deviceText()
            if !report.device_active { forgetTimeForAttitude(of: path) }
            return .device(path: path, active: report.device_active)
        case CGPS_CLASS_ERROR: return .error(messageText())
        case CGPS_CLASS_GST: return deviationReport()
        default: return .other
        }
    }

    /// The first text of a `time` member of `line` that is not a calendar time, `nil` if every one is: as the walk
    /// of its shape found it, unless the line has escapes, when it is searched for as leniently as libgps reads
    /// (``Plausibility/firstTimeTextNotACalendarTime(in:)``).
    private func notATime<Bytes: Collection<UInt8>>(_ line: Bytes, _ shape: JSONScan.ReportShape) -> String? {
        guard shape.hasEscapes else { return shape.firstTimeNotACalendarTime }
        bytesExamined += line.count   // the search for its time's text
        return Plausibility.firstTimeTextNotACalendarTime(in: line)
    }

    /// ``Plausibility/check(_:_:_:into:)`` into ``problems``, which it touches only for a value that cannot be true:
    /// every access to a property of this class is checked for exclusivity at run time, and a TPV has a score of
    /// values to check.
    private func checked(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind) -> Double? {
        if value.isNaN { return nil }
        if value.isFinite, range.contains(value) { return value }
        return Plausibility.check(value, range, kind, into: &problems)
    }

    /// A TPV, its values checked against ``Plausibility``: a fix whose position cannot be true is dropped (the
    /// report is then ``GPSDReport/other``), any other value that cannot be true is left out.
    private func tpvReport(notATime: String?) -> GPSDReport {
        let device = deviceText()
        var timestamp: Date? = report.has_time ? GPSDTime.date(seconds: report.time_sec, nanoseconds: report.time_nsec) : nil
        // The text as sent, and the time libgps made of it (its parser takes what is not even JSON).
        if notATime != nil || timestamp.map(Plausibility.isPlausible) == false {
            problems.append(ReportProblem(.time, notATime ?? timestamp.flatMap(GPSDTime.string(from:)) ?? ""))
            timestamp = nil
        }
        // A position with a part missing (NaN) is no position; one that cannot be true drops the fix.
        guard report.mode >= 2, report.has_position, !report.latitude.isNaN, !report.longitude.isNaN else {
            return .noFix(device: device, time: timestamp)
        }
        guard let latitude = checked(report.latitude, Plausibility.latitude, .latitude),
              let longitude = checked(report.longitude, Plausibility.longitude, .longitude)
        else { return .other }
        guard let timestamp else { return .fixWithoutTime(device: device) }
        func check(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind) -> Double? {
            checked(value, range, kind)
        }
        let isThreeD = report.mode >= 3
        let course = check(report.track, Plausibility.course, .course).map { $0 == 360 ? 0 : $0 }
        // NaN on a libgps without baselines (API < 13): the shim leaves them so.
        let baseline = Location.Baseline(
            east: check(report.base_east, Plausibility.baselineComponent, .baseline),
            north: check(report.base_north, Plausibility.baselineComponent, .baseline),
            up: check(report.base_up, Plausibility.baselineComponent, .baseline),
            length: check(report.base_length, Plausibility.baselineLength, .baseline),
            course: check(report.base_course, Plausibility.course, .course).map { $0 == 360 ? 0 : $0 })
        return .fix(Location(
            coordinate: .init(latitude: latitude, longitude: longitude),
            altitude: isThreeD ? check(report.alt_msl, Plausibility.altitude, .altitude) : nil,
            ellipsoidalAltitude: isThreeD ? check(report.alt_hae, Plausibility.altitude, .altitude) : nil,
            horizontalAccuracy: check(report.eph, Plausibility.positionError, .accuracy),
            verticalAccuracy: isThreeD ? check(report.epv, Plausibility.positionError, .accuracy) : nil,
            latitudeAccuracy: check(report.epy, Plausibility.positionError, .accuracy),
            longitudeAccuracy: check(report.epx, Plausibility.positionError, .accuracy),
            baseline: baseline == Location.Baseline() ? nil : baseline,
            speed: check(report.speed, Plausibility.speed, .speed),
            speedAccuracy: check(report.eps, Plausibility.speedError, .accuracy),
            course: course,
            courseAccuracy: check(report.epd, Plausibility.courseError, .accuracy),
            climb: isThreeD ? check(report.climb, Plausibility.climb, .climb) : nil,
            timestamp: timestamp,
            fix: isThreeD ? .threeDimensional : .twoDimensional,
            status: Location.Status(gpsdStatus: report.status),
            device: device
        ))
    }

    /// An ATT's heading, its values checked against ``Plausibility``: an ATT without a possible true heading is
    /// ``GPSDReport/other`` (pitch and roll alone are no heading; a magnetic heading alone is one only with the
    /// magnetic variation of the same receiver's newest TPV), any other value that cannot be true is left out.
    /// Its time, if it has none, and its magnetic heading, if gpsd gave none, come from that TPV too
    /// (``Heading/timestamp``, ``Heading/magneticHeading``); the report says whether the time is its own.
    private func attitudeReport(notATime: String?) -> GPSDReport {
        func check(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind) -> Double? {
            checked(value, range, kind)
        }
        let device = deviceText()
        var timestamp: Date? = report.has_time ? GPSDTime.date(seconds: report.time_sec, nanoseconds: report.time_nsec) : nil
        if notATime != nil || timestamp.map(Plausibility.isPlausible) == false {
            problems.append(ReportProblem(.time, notATime ?? timestamp.flatMap(GPSDTime.string(from:)) ?? ""))
            timestamp = nil
        }
        let tpv = newestTPVs[device ?? ""]
        let variation = tpv?.magneticVariation
        let reportedTrue = check(report.heading, Plausibility.heading, .heading).map(Self.normalized)
        let reportedMagnetic = check(report.magnetic_heading, Plausibility.heading, .heading).map(Self.normalized)
        // A magnetic compass alone ($HDM, gpsd 3.25+) gives true north only where gpsd knows the variation.
        guard let trueHeading = reportedTrue
                ?? reportedMagnetic.flatMap({ magnetic in variation.map { Self.heading(magnetic + $0, madeOf: magnetic, $0) } })
        else { return .other }
        return .attitude(Heading(
            trueHeading: trueHeading,
            magneticHeading: reportedMagnetic ?? variation.map { Self.heading(trueHeading - $0, madeOf: trueHeading, $0) },
            pitch: check(report.pitch, Plausibility.pitch, .attitude),
            roll: check(report.roll, Plausibility.roll, .attitude),
            timestamp: timestamp ?? tpv?.time,
            device: device), timed: timestamp != nil)
    }

    /// The receiver at `path` went (`nil`: every receiver): the time of its newest TPV is not the time of the
    /// headings it sends once it is back, so it is forgotten; its magnetic variation, which changes by degrees over
    /// hundreds of kilometres, is kept.
    private func forgetTimeForAttitude(of path: String?) {
        for key in newestTPVs.keys where path == nil || key == path { newestTPVs[key]?.time = nil }
    }

    /// Notes a TPV's time and gpsd's magnetic variation for its receiver's ATTs.
    private func noteForAttitude(_ tpv: GPSDReport) {
        let (device, time): (String?, Date?)
        switch tpv {
        case .fix(let location): (device, time) = (location.device, location.timestamp)
        case .fixWithoutTime(let path): (device, time) = (path, nil)
        case .noFix(let path, let noted): (device, time) = (path, noted)
        default: return   // a fix dropped: nothing to go by
        }
        let key = device ?? ""
        if newestTPVs[key] == nil, newestTPVs.count >= Self.maximumReceivers { newestTPVs.removeAll() }
        // The variation changes by degrees over hundreds of kilometres: a TPV without one (the fix lost, a
        // receiver's sentence without it) keeps the last the receiver gave, so a magnetic heading outlives the fix.
        let variation = checked(report.magnetic_var, Plausibility.magneticVariation, .magneticVariation)
        newestTPVs[key] = (time, variation ?? newestTPVs[key]?.magneticVariation)
    }

    /// A heading made of two of gpsd's numbers (`degrees`, of a heading and a variation) in 0 ..< 360, at their
    /// precision (``MeasuredPrecision``): 34.15 less 4.1 is 30.05, not 30.049999999999997.
    private static func heading(_ degrees: Double, madeOf heading: Double, _ variation: Double) -> Double {
        let rounded = MeasuredPrecision.rounded(normalized(degrees), madeOf: heading, variation)
        return rounded >= 360 ? 0 : rounded
    }

    /// Degrees in 0 ..< 360 (360 is 0, -10 is 350).
    private static func normalized(_ degrees: Double) -> Double {
        let turned = degrees.truncatingRemainder(dividingBy: 360)
        let positive = turned < 0 ? turned + 360 : turned
        return positive >= 360 ? 0 : positive + 0   // a tiny negative rounds up to 360; -0 becomes 0
    }

    /// A SKY: its satellites, counts and DOPs, each value checked against ``Plausibility``. Counts that cannot be
    /// true (negative, or past 255) refuse the report; a satellite whose number cannot be drops that satellite,
    /// and any other value that cannot be true is left out.
    ///
    /// A SKY with a satellite list is counted from the list as gpsd sent it (`list`, walked before libgps saw the
    /// line): gpsd's `nSat` and `uSat` are the same numbers when it writes them, and libgps ignores them too,
    /// counting its own array. That array holds ``libgpsSkyviewCapacity`` satellites; libgps (3.20 to 3.27)
    /// refuses a longer list part-way: it keeps the first ones, counts none of them (a SKY of 141 read "0 used of
    /// 0") and reads no member after the list. Such a view is ``SkyView/isTruncated``, with the list's counts, and
    /// a ``ReportProblem/Kind/truncatedSky`` problem is noted.
    ///
    /// A SKY without a list takes libgps's counts. libgps 3.25 can leave the count seen 0 beside a count used
    /// (gpsd 3.25 against a GSA without GSV gave 8 used of 0 seen): a satellite used is in view, so `visible` is
    /// at least `used`.
    private func skyReport(list: JSONScan.SatelliteList?, notATime: String?) -> GPSDReport {
        let (visible, used) = list.map { ($0.listed, $0.used) }
            ?? (Int(report.satellites_visible), Int(report.satellites_used))
        guard Plausibility.satellites.contains(visible), Plausibility.satellites.contains(used) else {
            problems.append(ReportProblem(.satellites, "\(used) of \(visible) used"))
            return .other
        }
        let capacity = Self.libgpsSkyviewCapacity
        let isTruncated = (list?.listed ?? 0) > capacity
        if isTruncated {
            problems.append(ReportProblem(.truncatedSky, "\(visible) listed, \(used) used; libgps holds \(capacity)"))
        }
        func check(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind) -> Double? {
            checked(value, range, kind)
        }
        var satellites: [Satellite] = []
        satellites.reserveCapacity(min(visible, capacity))   // one allocation, not one per doubling
        var entry = cgps_satellite()
        for index in 0..<Int32(capacity) where cgps_satellite_at(data, index, &entry) {
            guard let satellite = satellite(entry) else { continue }
            satellites.append(satellite)
        }
        var timestamp = report.has_time ? GPSDTime.date(seconds: report.time_sec, nanoseconds: report.time_nsec) : nil
        if notATime != nil || timestamp.map(Plausibility.isPlausible) == false {
            problems.append(ReportProblem(.time, notATime ?? timestamp.flatMap(GPSDTime.string(from:)) ?? ""))
            timestamp = nil
        }
        let dilution = DilutionOfPrecision(
            horizontal: check(report.hdop, Plausibility.dilution, .dilution),
            vertical: check(report.vdop, Plausibility.dilution, .dilution),
            position: check(report.pdop, Plausibility.dilution, .dilution),
            time: check(report.tdop, Plausibility.dilution, .dilution),
            geometric: check(report.gdop, Plausibility.dilution, .dilution),
            longitude: check(report.xdop, Plausibility.dilution, .dilution),
            latitude: check(report.ydop, Plausibility.dilution, .dilution))
        let view = SkyView(
            satellites: satellites, visible: max(visible, satellites.count), used: used, dilution: dilution,
            timestamp: timestamp, device: deviceText(), isTruncated: isTruncated)
        return .sky(view, listed: list != nil)
    }

    /// One satellite of a SKY's list: named by gpsd's `gnssid` and `svid` where it sent them, else by the range
    /// its PRN is in; `nil` (with a problem) if neither names one that can exist.
    private func satellite(_ entry: cgps_satellite) -> Satellite? {
        let prn = Int(entry.prn)
        let named = entry.has_identity ? Satellite.Constellation(gnssID: Int(entry.gnssid)) : nil
        let (constellation, id) = if let named { (named, Int(entry.svid)) } else { Satellite.identity(prn: prn) }
        guard Plausibility.satelliteNumber.contains(id), prn == 0 || Plausibility.satelliteNumber.contains(prn) else {
            problems.append(ReportProblem(.satellite, "PRN \(prn), gnssid \(entry.gnssid), svid \(entry.svid)"))
            return nil
        }
        func check(_ value: Double, _ range: ClosedRange<Double>, _ kind: ReportProblem.Kind) -> Double? {
            checked(value, range, kind)
        }
        return Satellite(
            constellation: constellation, id: id, prn: prn,
            elevation: check(entry.elevation, Plausibility.elevation, .elevation),
            azimuth: check(entry.azimuth, Plausibility.azimuth, .azimuth).map { $0 == 360 ? 0 : $0 },
            signalStrength: check(entry.ss, Plausibility.signal, .signal),
            isUsed: entry.used,
            health: entry.health == 1 ? .healthy : entry.health == 2 ? .unhealthy : nil)
    }

    /// A GST report: its 1-sigma errors, each checked like an error estimate. A report with none left is
    /// ``GPSDReport/other``.
    private func deviationReport() -> GPSDReport {
        let deviation = Location.Deviation(
            latitude: checked(report.lat_deviation, Plausibility.positionError, .accuracy),
            longitude: checked(report.lon_deviation, Plausibility.positionError, .accuracy),
            altitude: checked(report.alt_deviation, Plausibility.positionError, .accuracy))
        guard deviation != Location.Deviation() else { return .other }
        let time = report.has_time ? GPSDTime.date(seconds: report.time_sec, nanoseconds: report.time_nsec) : nil
        return .deviation(deviation, device: deviceText(), time: time.flatMap { Plausibility.isPlausible($0) ? $0 : nil })
    }

    private func deviceText() -> String? {
        let path = withUnsafeBytes(of: report.device) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return path.isEmpty ? nil : path
    }

    private func messageText() -> String {
        withUnsafeBytes(of: report.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    /// libgps (up to at least 3.22) does not unpack POLL replies: take the TPVs out and unpack each (only TPVs:
    /// whatever else the list holds is skipped, not decoded).
    private func pollReport(_ line: some Collection<UInt8>) -> GPSDReport? {
        bytesExamined += line.count
        guard let members = JSONScan.members(of: line) else { return nil }
        let time = members.first { $0.key == "time" }.flatMap { JSONScan.plainString($0.value) }.flatMap(GPSDTime.date(from:))
        let tpvs: [ArraySlice<UInt8>]
        if let list = members.first(where: { $0.key == "tpv" }) {
            bytesExamined += list.value.count
            guard let elements = JSONScan.elements(of: list.value) else { return nil }
            tpvs = elements
        } else {
            tpvs = []
        }
        var reports: [GPSDReport] = []
        var found: [ReportProblem] = []
        for tpv in tpvs where tpv.first == UInt8(ascii: "{") {
            problems.removeAll(keepingCapacity: true)
            let report = decode(tpv, onlyTPV: true)
            found += problems   // each TPV's own list
            guard let report, case .fix = report else { continue }
            reports.append(report)
        }
        problems = found
        return .poll(time: time, reports: reports)
    }

    /// A DEVICES report: how many receivers gpsd lists. Counted here, not by libgps, whose parser (3.22's) loops
    /// for ever on some device lists (found by Scripts/fuzz decoder).
    private func devicesReport(_ line: some Collection<UInt8>) -> GPSDReport? {
        bytesExamined += line.count
        guard let members = JSONScan.members(of: line) else { return nil }
        guard let list = members.first(where: { $0.key == "devices" }) else { return .devices(count: 0) }
        bytesExamined += list.value.count
        guard let elements = JSONScan.elements(of: list.value) else { return nil }
        return .devices(count: elements.filter { $0.first == UInt8(ascii: "{") }.count)
    }
}

extension Location.Status {
    /// Maps gpsd's `status` number. 0 ("unknown") is what gpsd reports for an ordinary fix.
    init(gpsdStatus: Int32) {
        switch gpsdStatus {
        case CGPS_STATUS_DGPS: self = .dgps
        case CGPS_STATUS_RTK_FIXED: self = .rtkFixed
        case CGPS_STATUS_RTK_FLOAT: self = .rtkFloat
        case CGPS_STATUS_DR: self = .deadReckoning
        case CGPS_STATUS_GNSSDR: self = .gnssDeadReckoning
        case CGPS_STATUS_TIME: self = .timeOnly
        case CGPS_STATUS_SIMULATED: self = .simulated
        case CGPS_STATUS_PPS: self = .precisePositioning
        default: self = .gps
        }
    }
}
