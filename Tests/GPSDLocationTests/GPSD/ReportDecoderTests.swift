import Foundation
import GPSDLocation
import Testing

/// Lines in gpsd's documented JSON format (`man gpsd_json`), as gpsd 3.22+ sends them.
@Suite("ReportDecoder")
struct ReportDecoderTests {
    private static let fullTPV = """
        {"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2025-06-01T12:00:05.000Z","ept":0.005,\
        "lat":-33.5,"lon":-70.25,"altHAE":520.1,"altMSL":490.3,"epx":3.1,"epy":4.2,"epv":9.5,"track":225.0,\
        "speed":10.0,"climb":0.1,"eps":0.5,"epc":1.2,"eph":6.1}
        """

    /// 2025-06-01T12:00:00Z.
    private static let epoch = 1_748_779_200.0

    private let decoder: ReportDecoder

    init() throws { decoder = try ReportDecoder() }

    private func decode(_ line: String) -> GPSDReport? {
        decoder.decode(Array(line.utf8))
    }

    private func fix(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Location {
        let report = try #require(decode(line), sourceLocation: sourceLocation)
        guard case .fix(let location) = report else {
            Issue.record("expected a fix, got \(report)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return location
    }

    /// A TPV line with these extra members after the class, device and time.
    private func tpv(_ members: String, device: String = "/dev/ttyUSB0", second: Int = 5) -> String {
        #"{"class":"TPV","device":"\#(device)","time":"2025-06-01T12:00:0\#(second).000Z",\#(members)}"#
    }

    // MARK: TPV

    @Test func threeDimensionalTPVMapsEveryField() throws {
        let location = try fix(Self.fullTPV)
        #expect(location.coordinate == .init(latitude: -33.5, longitude: -70.25))
        #expect(location.altitude == 490.3)
        #expect(location.ellipsoidalAltitude == 520.1)
        #expect(location.horizontalAccuracy == 6.1)
        #expect(location.verticalAccuracy == 9.5)
        #expect(location.speed == 10.0)
        #expect(location.speedAccuracy == 0.5)
        #expect(location.course == 225.0)
        #expect(location.courseAccuracy == nil)  // no epd in the line
        #expect(location.climb == 0.1)
        #expect(location.timestamp == Date(timeIntervalSince1970: Self.epoch + 5))
        #expect(location.fix == .threeDimensional)
        #expect(location.status == .gps)
        #expect(location.device == "/dev/ttyUSB0")
    }

    @Test func fractionalTimeIsExact() throws {
        let location = try fix(tpv(#""mode":2,"lat":1.0,"lon":2.0"#).replacingOccurrences(of: "05.000Z", with: "05.250Z"))
        #expect(location.timestamp == Date(timeIntervalSince1970: Self.epoch + 5.25))
    }

    @Test func courseAccuracyIsEpd() throws {
        let location = try fix(tpv(#""mode":3,"lat":1.0,"lon":2.0,"track":10.5,"epd":7.25"#))
        #expect(location.course == 10.5)
        #expect(location.courseAccuracy == 7.25)
    }

    @Test func horizontalAccuracyIsEphEvenWithoutEpxEpy() throws {
        // gpsd sends eph without epx/epy when it knows the HDOP but not the satellites' geometry (a receiver
        // sending GGA, GSA and RMC but no GSV).
        let location = try fix(tpv(#""mode":3,"lat":1.0,"lon":2.0,"eph":12.5"#))
        #expect(location.horizontalAccuracy == 12.5)
    }

    @Test func horizontalAccuracyIsEphNotEpxOrEpy() throws {
        let location = try fix(tpv(#""mode":3,"lat":1.0,"lon":2.0,"epx":3.0,"epy":4.0,"eph":7.5"#))
        #expect(location.horizontalAccuracy == 7.5)
    }

    @Test func missingValuesAreNilNotNaN() throws {
        let location = try fix(tpv(#""mode":3,"lat":1.0,"lon":2.0"#))
        #expect(location.altitude == nil)
        #expect(location.ellipsoidalAltitude == nil)
        #expect(location.horizontalAccuracy == nil)
        #expect(location.verticalAccuracy == nil)
        #expect(location.speed == nil)
        #expect(location.speedAccuracy == nil)
        #expect(location.course == nil)
        #expect(location.courseAccuracy == nil)
        #expect(location.climb == nil)
        #expect(location.fix == .threeDimensional)
    }

    @Test(arguments: [
        ("", Location.Status.gps),
        (#","status":0"#, .gps),
        (#","status":1"#, .gps),
        (#","status":2"#, .dgps),
        (#","status":3"#, .rtkFixed),
        (#","status":4"#, .rtkFloat),
        (#","status":5"#, .deadReckoning),
        (#","status":6"#, .gnssDeadReckoning),
        (#","status":7"#, .timeOnly),
        (#","status":8"#, .simulated),
        (#","status":9"#, .precisePositioning),
    ])
    func statusMapsGPSDStatus(member: String, expected: Location.Status) throws {
        let location = try fix(tpv(#""mode":3,"lat":1.0,"lon":2.0"# + member))
        #expect(location.status == expected)
    }

    @Test func mode2IsTwoDimensionalWithoutAltitude() throws {
        // gpsd may still send an altitude it has kept; a 2D fix must not pass it on.
        let location = try fix(tpv(#""mode":2,"lat":52.5,"lon":13.25,"altHAE":80.0,"altMSL":40.0,"epv":5.0,"climb":0.5,"speed":1.5,"epx":3.0,"epy":4.0,"eph":8.0"#))
        #expect(location.fix == .twoDimensional)
        #expect(location.coordinate == .init(latitude: 52.5, longitude: 13.25))
        #expect(location.altitude == nil)
        #expect(location.ellipsoidalAltitude == nil)
        #expect(location.verticalAccuracy == nil)
        #expect(location.climb == nil)
        #expect(location.speed == 1.5)
        #expect(location.horizontalAccuracy == 8.0)
    }

    @Test func mode1IsNoFix() {
        let report = decode(tpv(#""mode":1"#))
        #expect(report == .noFix(device: "/dev/ttyUSB0", time: Date(timeIntervalSince1970: Self.epoch + 5)))
    }

    @Test func mode1WithStalePositionIsStillNoFix() {
        let report = decode(tpv(#""mode":1,"lat":1.0,"lon":2.0"#))
        #expect(report == .noFix(device: "/dev/ttyUSB0", time: Date(timeIntervalSince1970: Self.epoch + 5)))
    }

    @Test func mode3WithoutLatitudeIsNoFix() {
        let report = decode(tpv(#""mode":3,"lon":2.0,"altHAE":10.0"#))
        #expect(report == .noFix(device: "/dev/ttyUSB0", time: Date(timeIntervalSince1970: Self.epoch + 5)))
    }

    @Test func firstTPVOfASessionHasNoTimeAndNoDevice() {
        // What gpsd sends before the receiver has said anything useful.
        #expect(decode(#"{"class":"TPV","mode":0}"#) == .noFix(device: nil, time: nil))
        #expect(decode(#"{"class":"TPV","device":"/dev/ttyACM0","mode":1}"#) == .noFix(device: "/dev/ttyACM0", time: nil))
    }

    @Test func decoderKeepsNoStateBetweenLines() throws {
        // A fix, then a SKY and a fixless TPV: neither may inherit the fix's position.
        let first = decoder.decode(Array(Self.fullTPV.utf8))
        guard case .fix = first else {
            Issue.record("expected a fix, got \(String(describing: first))")
            return
        }
        let sky = decoder.decode(Array(#"{"class":"SKY","device":"/dev/ttyUSB0","satellites":[]}"#.utf8))
        #expect(sky == .sky(SkyView(satellites: [], device: "/dev/ttyUSB0"), listed: true))
        let noFix = decoder.decode(Array(tpv(#""mode":1"#, second: 6).utf8))
        #expect(noFix == .noFix(device: "/dev/ttyUSB0", time: Date(timeIntervalSince1970: Self.epoch + 6)))
        let sparse = try #require(decoder.decode(Array(tpv(#""mode":2,"lat":1.0,"lon":2.0"#, second: 7).utf8)))
        guard case .fix(let location) = sparse else {
            Issue.record("expected a fix, got \(sparse)")
            return
        }
        #expect(location.speed == nil)
        #expect(location.horizontalAccuracy == nil)
        #expect(location.status == .gps)
    }

    // MARK: Other classes

    @Test func skyGivesEverySatelliteTheCountsAndTheDOPs() {
        let line = """
            {"class":"SKY","device":"/dev/ttyUSB0","time":"2025-06-01T12:00:05.000Z","xdop":0.69,"ydop":0.81,\
            "vdop":1.12,"tdop":0.74,"hdop":1.06,"gdop":1.72,"pdop":1.54,"satellites":[\
            {"PRN":5,"el":31.0,"az":86.0,"ss":40.0,"used":true,"gnssid":0,"svid":5},\
            {"PRN":7,"el":12.0,"az":280.0,"ss":0.0,"used":false,"gnssid":0,"svid":7},\
            {"PRN":13,"el":44.0,"az":53.0,"ss":45.0,"used":true,"gnssid":0,"svid":13},\
            {"PRN":30,"el":71.0,"az":297.0,"ss":47.0,"used":true,"gnssid":0,"svid":30}]}
            """
        let satellites = [
            Satellite(constellation: .gps, id: 5, prn: 5, elevation: 31, azimuth: 86, signalStrength: 40, isUsed: true),
            Satellite(constellation: .gps, id: 7, prn: 7, elevation: 12, azimuth: 280, signalStrength: 0, isUsed: false),
            Satellite(constellation: .gps, id: 13, prn: 13, elevation: 44, azimuth: 53, signalStrength: 45, isUsed: true),
            Satellite(constellation: .gps, id: 30, prn: 30, elevation: 71, azimuth: 297, signalStrength: 47, isUsed: true),
        ]
        let dilution = DilutionOfPrecision(
            horizontal: 1.06, vertical: 1.12, position: 1.54, time: 0.74, geometric: 1.72, longitude: 0.69, latitude: 0.81)
        let expected = SkyView(
            satellites: satellites, visible: 4, used: 3, dilution: dilution,
            timestamp: Date(timeIntervalSince1970: Self.epoch + 5), device: "/dev/ttyUSB0")
        #expect(decode(line) == .sky(expected, listed: true))
        #expect(expected.count == SatelliteCount(visible: 4, used: 3))
    }

    @Test func versionBannerGivesRelease() {
        let line = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#
        #expect(decode(line) == .version("3.22"))
    }

    @Test func errorGivesMessage() {
        let line = #"{"class":"ERROR","message":"Unrecognized request 'FOO'"}"#
        #expect(decode(line) == .error("Unrecognized request 'FOO'"))
    }

    @Test func devicesCountsReceivers() {
        let line = """
            {"class":"DEVICES","devices":[\
            {"class":"DEVICE","path":"/dev/ttyUSB0","driver":"u-blox","activated":"2025-06-01T12:00:00.000Z",\
            "flags":1,"native":1,"bps":9600,"parity":"N","stopbits":1,"cycle":1.00},\
            {"class":"DEVICE","path":"/dev/ttyACM0","driver":"NMEA0183","activated":"2025-06-01T12:00:00.000Z",\
            "flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}
            """
        #expect(decode(line) == .devices(count: 2))
    }

    @Test func watchIsOther() {
        let line = #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#
        #expect(decode(line) == .other)
    }

    @Test(arguments: ["", "hello", "{\"broken", "{}", "{\"foo\":1}", "[1,2]", "   ", "$GPGGA,120005.00,,,,,0,00,99.99,,,,,,*6B"])
    func garbageIsNotAReport(line: String) {
        #expect(decode(line) == nil)
    }

    /// A recording cut off mid-line (gpspipe killed while writing) ends in a truncated report; a line that was
    /// cut is not a report (`SourceEvent.skippedLine`: "garbage, truncated, too long").
    @Test func truncatedTPVIsNotAReport() {
        let cuts = [
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2025-06-01T12:00:0"#,
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":-33.5,"lon":-70.25,"#,
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":-33.5,"lon":-70.25,"eph":6"#,
        ]
        for line in cuts {
            #expect(decode(line) == nil, "\(line)")
        }
    }

    @Test func truncatedGarbageWithoutClassIsNotAReport() {
        #expect(decode(#"{"lat":-33.5,"lon":-70.25,"#) == nil)
    }

    // MARK: POLL

    @Test func pollReplyCarriesItsFixes() throws {
        let line = """
            {"class":"POLL","time":"2025-06-01T12:00:06.000Z","active":1,"tpv":[\(Self.fullTPV)],\
            "sky":[{"class":"SKY","device":"/dev/ttyUSB0","time":"2025-06-01T12:00:05.000Z","satellites":[]}]}
            """
        let report = try #require(decode(line))
        guard case .poll(let time, let reports) = report else {
            Issue.record("expected a POLL reply, got \(report)")
            return
        }
        #expect(time == Date(timeIntervalSince1970: Self.epoch + 6))
        #expect(reports == [.fix(try fix(Self.fullTPV))])
        guard case .fix(let location) = reports.first else { return }
        #expect(location.device == "/dev/ttyUSB0")
        #expect(location.coordinate == .init(latitude: -33.5, longitude: -70.25))
        #expect(location.altitude == 490.3)
        #expect(location.horizontalAccuracy == 6.1)
        #expect(location.timestamp == Date(timeIntervalSince1970: Self.epoch + 5))
    }

    @Test func pollReplyKeepsOnlyTheFixesOfSeveralDevices() throws {
        let noFix = #"{"class":"TPV","device":"/dev/ttyACM0","mode":1,"time":"2025-06-01T12:00:05.000Z"}"#
        let second = tpv(#""mode":2,"lat":1.0,"lon":2.0"#, device: "/dev/ttyS1", second: 4)
        let line = #"{"class":"POLL","time":"2025-06-01T12:00:06.000Z","active":3,"tpv":["#
            + [Self.fullTPV, noFix, second].joined(separator: ",") + #"],"sky":[]}"#
        let report = try #require(decode(line))
        guard case .poll(_, let reports) = report else {
            Issue.record("expected a POLL reply, got \(report)")
            return
        }
        #expect(reports.count == 2)
        #expect(reports == [.fix(try fix(Self.fullTPV)), .fix(try fix(second))])
    }

    @Test func pollReplyWithoutDevicesIsEmpty() {
        let line = #"{"class":"POLL","time":"2025-06-01T12:00:06.000Z","active":0,"tpv":[],"sky":[]}"#
        #expect(decode(line) == .poll(time: Date(timeIntervalSince1970: Self.epoch + 6), reports: []))
    }

    @Test func pollReplyWithBracketsAndQuotesInStringsFindsEachFix() throws {
        // Brackets, braces and escaped quotes inside strings do not end an object early.
        let tricky = tpv(#""mode":2,"lat":1.0,"lon":2.0,"tag":"a ] } \" [ {""#, device: "/dev/tty[1]", second: 4)
        let line = #"{"class":"POLL","tpv":["# + [tricky, Self.fullTPV].joined(separator: ",")
            + #"],"time":"2025-06-01T12:00:06.000Z","sky":[]}"#
        let report = try #require(decode(line))
        #expect(report == .poll(time: Date(timeIntervalSince1970: Self.epoch + 6),
                                reports: [.fix(try fix(tricky)), .fix(try fix(Self.fullTPV))]))
    }

    @Test func malformedPollReplyIsNotAReport() {
        // libgps takes these for POLL replies; their TPV list cannot be read whole, so nothing of them is used.
        for line in [#"{"class":"POLL","time":"2025-06-01T12:00:06.000Z","tpv":[{"class":"TPV"},],"sky":[]}"#,
                     #"{"class":"POLL","tpv":[{"class":"TPV","mode":3,"lat":1,"lon":2}] "sky":[]}"#] {
            #expect(decode(line) == nil, "\(line)")
        }
    }

    @Test func objectWithAClassMemberIsAReportAndOneThatOnlyMentionsAClassIsNot() {
        #expect(decode(#"{"class":"FUTURE","value":1}"#) == .other)
        #expect(decode(#"{"note":"\"class\" is not a member here","value":1}"#) == nil)
    }

    // MARK: What differs between libgps releases

    @Test func rtkBaselineIsReadWhereLibgpsHasItAndNilWhereItDoesNot() throws {
        let withBaseline = tpv(#""mode":3,"lat":1.0,"lon":2.0,"baseS":3,"baseE":3.25,"baseN":-1.5,"baseU":0.125,"#
            + #""baseL":3.58,"baseC":114.8"#)
        let without = tpv(#""mode":3,"lat":1.0,"lon":2.0"#, second: 6)
        let decoder = try ReportDecoder()
        func location(_ line: String) -> Location? {
            guard case .fix(let location)? = decoder.decode(Array(line.utf8)) else { return nil }
            return location
        }
        let first = try #require(location(withBaseline))
        if ReportDecoder.libgpsAPIVersion >= 13 {
            #expect(first.baseline == Location.Baseline(east: 3.25, north: -1.5, up: 0.125, length: 3.58, course: 114.8))
        } else {
            #expect(first.baseline == nil, "libgps API \(ReportDecoder.libgpsAPIVersion) has no baselines")
        }
        // The next TPV without one has none: nothing is left over from the last.
        #expect(try #require(location(without)).baseline == nil)
        #expect(decoder.problems.isEmpty)
    }

    @Test func anRTKBaselineLongerThanTheEarthIsLeftOutAndTheFixKept() throws {
        let decoder = try ReportDecoder()
        let line = tpv(#""mode":3,"lat":1.0,"lon":2.0,"baseE":2.5e7,"baseN":1.0,"baseL":2.5e7"#)
        guard case .fix(let location)? = decoder.decode(Array(line.utf8)) else {
            Issue.record("the fix itself is plausible and must be kept")
            return
        }
        if ReportDecoder.libgpsAPIVersion >= 13 {
            #expect(location.baseline == Location.Baseline(north: 1.0))
            #expect(decoder.problems.map(\.kind) == [.baseline, .baseline])
        } else {
            #expect(location.baseline == nil)
            #expect(decoder.problems.isEmpty)
        }
    }
}
