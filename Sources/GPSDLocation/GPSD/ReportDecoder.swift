import CGPS
import Foundation

// The C boundary: every libgps call GPSDLocation makes is in this file. libgps parses each report
// (`gps_unpack`) into a `gps_data_t` of the decoder's own, which the shim copies into plain values.

/// Parses gpsd JSON reports with libgps's own parser (`gps_unpack`).
///
/// Not thread-safe: one decoder per thread. The `gps_data_t` it parses into is its own.
package final class ReportDecoder {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var report = cgps_report()

    /// - Throws: ``LocationError/Code/resourceUnavailable`` if the memory for libgps's `gps_data_t` cannot be
    ///   had.
    package init() throws(LocationError) {
        guard let data = cgps_alloc() else {
            throw LocationError(.resourceUnavailable, "cannot allocate libgps's gps_data_t", errorNumber: ENOMEM)
        }
        self.data = data
    }

    deinit { cgps_free(data) }

    /// Decodes one JSON line (without its newline). `nil` if it is not a gpsd report.
    package func decode<Bytes: Collection<UInt8>>(_ line: Bytes) -> GPSDReport? {
        // gps_unpack wants a writable, NUL-terminated C string.
        var bytes = [CChar]()
        bytes.reserveCapacity(line.count + 1)
        for byte in line { bytes.append(CChar(bitPattern: byte)) }
        bytes.append(0)
        // A report is one whole JSON object. gpsd's lines end with '}'; libgps's parser accepts a line cut
        // off anywhere (a recording whose writer died), so insist on both ends.
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        guard line.first(where: { !whitespace.contains($0) }) == UInt8(ascii: "{"),
              line.reversed().first(where: { !whitespace.contains($0) }) == UInt8(ascii: "}")
        else { return nil }
        let result = bytes.withUnsafeMutableBufferPointer { cgps_unpack($0.baseAddress, data, &report) }
        guard result >= 0 else { return nil }
        switch report.report_class {
        case CGPS_CLASS_TPV: return tpvReport()
        case CGPS_CLASS_SKY:
            return .sky(SatelliteCount(visible: Int(report.satellites_visible), used: Int(report.satellites_used)))
        case CGPS_CLASS_VERSION: return .version(messageText())
        case CGPS_CLASS_DEVICES: return .devices(count: Int(report.device_count))
        case CGPS_CLASS_ERROR: return .error(messageText())
        case CGPS_CLASS_POLL: return pollReport(Data(line))
        default:
            // gps_unpack accepts any JSON object; only objects with a class are reports.
            return Data(line).containsClassKey ? .other : nil
        }
    }

    private func tpvReport() -> GPSDReport {
        let device = deviceText()
        let timestamp: Date? = report.has_time ? GPSDTime.date(seconds: report.time_sec, nanoseconds: report.time_nsec) : nil
        guard report.mode >= 2, report.latitude.isFinite, report.longitude.isFinite else {
            return .noFix(device: device, time: timestamp)
        }
        func value(_ x: Double) -> Double? { x.isFinite ? x : nil }
        let isThreeD = report.mode >= 3
        return .fix(Location(
            coordinate: .init(latitude: report.latitude, longitude: report.longitude),
            altitude: isThreeD ? value(report.alt_msl) : nil,
            ellipsoidalAltitude: isThreeD ? value(report.alt_hae) : nil,
            horizontalAccuracy: value(report.eph),
            verticalAccuracy: isThreeD ? value(report.epv) : nil,
            speed: value(report.speed),
            speedAccuracy: value(report.eps),
            course: value(report.track),
            courseAccuracy: value(report.epd),
            climb: isThreeD ? value(report.climb) : nil,
            timestamp: timestamp,
            fix: isThreeD ? .threeDimensional : .twoDimensional,
            status: Location.Status(gpsdStatus: report.status),
            device: device
        ))
    }

    private func deviceText() -> String? {
        let path = withUnsafeBytes(of: report.device) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return path.isEmpty ? nil : path
    }

    private func messageText() -> String {
        withUnsafeBytes(of: report.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    /// libgps (up to at least 3.22) does not unpack POLL replies: take the TPVs out and unpack each.
    private func pollReport(_ line: Data) -> GPSDReport? {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { return nil }
        let time = (object["time"] as? String).flatMap(GPSDTime.date(from:))
        let tpvs = object["tpv"] as? [Any] ?? []
        var reports: [GPSDReport] = []
        for tpv in tpvs {
            guard JSONSerialization.isValidJSONObject(tpv),
                  let data = try? JSONSerialization.data(withJSONObject: tpv),
                  let report = decode(data), case .fix = report
            else { continue }
            reports.append(report)
        }
        return .poll(time: time, reports: reports)
    }
}

extension Data {
    fileprivate var containsClassKey: Bool { range(of: Data("\"class\"".utf8)) != nil }
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
