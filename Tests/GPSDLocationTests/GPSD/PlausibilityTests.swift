import Foundation
@testable import GPSDCore
import GPSDLocation
import Testing

/// What the decoder does with values that cannot be true: a position drops the fix, anything else is left out,
/// and every one is reported as a problem.
@Suite("Plausibility")
struct PlausibilityTests {
    private let decoder: ReportDecoder

    init() throws { decoder = try ReportDecoder() }

    private func tpv(_ members: String) -> String {
        #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2025-06-01T12:00:05.000Z","# + members + "}"
    }

    private func decode(_ line: String) -> (GPSDReport?, [ReportProblem.Kind]) {
        let report = decoder.decode(Array(line.utf8))
        return (report, decoder.problems.map(\.kind))
    }

    // MARK: The four reports of the resilience issue

    @Test(arguments: [
        (#""lat":91.5,"lon":13.4"#, ReportProblem.Kind.latitude),
        (#""lat":52.5,"lon":200"#, .longitude),
        (#""lat":1e308,"lon":1e308"#, .latitude),
        (#""lat":-90.000001,"lon":0"#, .latitude),
        (#""lat":1e400,"lon":0"#, .latitude),
    ])
    func aPositionThatCannotBeTrueDropsTheFix(members: String, kind: ReportProblem.Kind) {
        let (report, problems) = decode(tpv(members + #","altMSL":40.0"#))
        if members.contains("1e400") && ReportDecoder.libgpsAPIVersion >= 14 {
            // libgps 3.25+ refuses a number beyond a double itself: no position at all, so no fix either.
            #expect(report == .noFix(device: "/dev/ttyUSB0", time: GPSDTime.date(from: "2025-06-01T12:00:05.000Z")))
            #expect(problems.isEmpty)
            return
        }
        #expect(report == .other, "not a fix, not a lost fix")
        #expect(problems.first == kind)
        #expect(decoder.problems.first?.dropsFix == true)
    }

    @Test func aTimeThatIsNotACalendarTimeIsLeftOutAndTheFixHeldBack() throws {
        let line = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2024-13-45T99:99:99Z","lat":52.5,"lon":13.4}"#
        let (report, problems) = decode(line)
        // Not the 2023-12-31 libgps makes of it: a fix without its time.
        #expect(report == .fixWithoutTime(device: "/dev/ttyUSB0"))
        #expect(problems == [.time])
    }

    @Test("a problem's value shows what a terminal would obey as escapes, C1 controls and bidi overrides too")
    func problemValuesAreEscaped() {
        // Found by Scripts/fuzz decoder: U+0082 (a C1 control) was kept raw, escaped(asASCII: false) leaving it.
        let problem = ReportProblem(.time, "2025-06-01T12:00:\u{1B}[31m\u{82}\u{202E}05Z")
        #expect(problem.value == #"2025-06-01T12:00:\u{1B}[31m\u{0082}\u{202E}05Z"#)
        #expect(problem.value.unicodeScalars.allSatisfy { $0.isPrintable })
        #expect(ReportProblem(.time, "12:00:05é").value == "12:00:05é", "printable text is kept as it is")
    }

    @Test("a line that is not JSON is no report, whatever libgps would make of it", arguments: [
        // Found by fuzzing: libgps takes `"time""…"` (no colon) and makes year 225 of "225-6-01T…".
        #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time""225-6-01T14:58:29.000Z","lat":1,"lon":2}"#,
        // Form feed and vertical tab are white space to libgps, not to JSON.
        "{\"class\":\"TPV\",\"mode\":3,\"time\"\u{0C}:\u{0B}\"2025-06-01T12:00:05.-9e9Z\",\"lat\":1,\"lon\":2}",
        // Found by Scripts/fuzz decoder: libgps 3.22's parser loops for ever on it.
        #"{e"class":"WATCH""#, #"{"class":"TPV","mode":3,"lat":1,"lon":2,}"#, #"{"class":"TPV","mode":03,"lat":1,"lon":2}"#,
        #"{"class":"TPV","mode":3,"lat":1,"lon":2} {}"#, #"{"class":"TPV","mode":3,"lat":.5,"lon":2}"#,
    ])
    func notJSON(line: String) throws {
        let (report, problems) = decode(line)
        #expect(report == nil, "\(String(describing: report))")
        #expect(problems.isEmpty)
    }

    @Test("a time behind a CR, or sent twice (libgps takes the last), is checked as sent", arguments: [
        "{\"class\":\"TPV\",\"mode\":3,\"time\"\r:\"2025-06-01T12:00:05.-9e9Z\",\"lat\":1,\"lon\":2}",
        #"{"class":"TPV","mode":3,"time":"2025-06-01T12:00:05.000Z","time":"2025-06-01T12:00:05.-9e9Z","lat":1,"lon":2}"#,
    ])
    func timesHiddenFromTheCheck(line: String) throws {
        let (report, problems) = decode(line)
        guard case .fixWithoutTime = try #require(report) else {
            Issue.record("expected a fix without its time, got \(String(describing: report))")
            return
        }
        #expect(problems == [.time])
    }

    @Test("a SKY's counts that cannot be true are refused or never reach a user, whatever libgps makes of them")
    func impossibleSatelliteCounts() {
        for line in [#"{"class":"SKY","nSat":-5,"uSat":3,"satellites":[]}"#, #"{"class":"SKY","nSat":5,"uSat":-1}"#,
                     #"{"class":"SKY","nSat":100000,"uSat":3}"#, #"{"class":"SKY","nSat":3,"uSat":256}"#] {
            // libgps versions differ: 3.22 counts the list (none here), 3.25 reads nSat and uSat its own way.
            switch decode(line) {
            case (.sky(let view, _)?, let problems):
                let count = view.count
                #expect((0...255).contains(count.visible) && (0...count.visible).contains(count.used), "\(line): \(count)")
                #expect(problems.isEmpty)
            case (let report, let problems):
                #expect(report == .other && problems == [.satellites], "\(line)")
            }
        }
        let listed = #"{"class":"SKY","satellites":[{"PRN":5,"used":true},{"PRN":6,"used":false}]}"#
        let satellites = [Satellite(constellation: .gps, id: 5, prn: 5, isUsed: true), Satellite(constellation: .gps, id: 6, prn: 6)]
        #expect(decode(listed).0 == .sky(SkyView(satellites: satellites, visible: 2, used: 1), listed: true))
    }

    @Test("a SKY with more used than seen (gpsd 3.25 without a view of the sky) counts the used as seen")
    func moreUsedThanSeen() {
        // gpsd 3.25 sent "8 of 0 used" for a receiver's GSA without GSV; libgps before 3.25 counts the list.
        // libgps 3.25 (API 14) takes uSat and leaves the count seen 0.
        let (report, problems) = decode(#"{"class":"SKY","device":"/dev/pts/1","uSat":8}"#)
        #expect(problems.isEmpty, "a count gpsd sends is not logged as impossible")
        let expected = ReportDecoder.libgpsAPIVersion == 14 ? SatelliteCount(visible: 8, used: 8) : SatelliteCount(visible: 0, used: 0)
        #expect(report == .sky(SkyView(satellites: [], visible: expected.visible, used: expected.used, device: "/dev/pts/1"), listed: false))
    }

    @Test func theEdgesOfThePossibleArePossible() throws {
        let (report, problems) = decode(tpv(#""lat":-90,"lon":180,"altMSL":-11000,"speed":0,"track":359.99"#))
        guard case .fix(let location) = try #require(report) else {
            Issue.record("expected a fix, got \(String(describing: report))")
            return
        }
        #expect(location.coordinate == Location.Coordinate(latitude: -90, longitude: 180))
        #expect(location.altitude == -11000 && location.speed == 0 && location.course == 359.99)
        #expect(problems.isEmpty)
    }

    // MARK: Values left out

    @Test(arguments: [
        (#""altMSL":1e308"#, ReportProblem.Kind.altitude, "altitude"),
        (#""altHAE":-20000"#, .altitude, "ellipsoidalAltitude"),
        (#""speed":-0.5"#, .speed, "speed"),
        (#""speed":99999"#, .speed, "speed"),
        (#""climb":-1e9"#, .climb, "climb"),
        (#""track":400"#, .course, "course"),
        (#""track":-1"#, .course, "course"),
        (#""eph":-3"#, .accuracy, "horizontalAccuracy"),
        (#""epv":1e12"#, .accuracy, "verticalAccuracy"),
        (#""eps":-1"#, .accuracy, "speedAccuracy"),
        (#""epd":720"#, .accuracy, "courseAccuracy"),
    ])
    func anAbsurdValueIsLeftOutAndTheFixKept(member: String, kind: ReportProblem.Kind, field: String) throws {
        let (report, problems) = decode(tpv(#""lat":52.5,"lon":13.4,"# + member))
        guard case .fix(let location) = try #require(report) else {
            Issue.record("expected a fix, got \(String(describing: report))")
            return
        }
        let values: [String: Double?] = [
            "altitude": location.altitude, "ellipsoidalAltitude": location.ellipsoidalAltitude, "speed": location.speed,
            "climb": location.climb, "course": location.course, "horizontalAccuracy": location.horizontalAccuracy,
            "verticalAccuracy": location.verticalAccuracy, "speedAccuracy": location.speedAccuracy,
            "courseAccuracy": location.courseAccuracy,
        ]
        #expect(values[field] == .some(nil), "\(field) is left out")
        #expect(location.coordinate.latitude == 52.5)
        #expect(problems == [kind])
        #expect(decoder.problems.first?.dropsFix == false)
    }

    @Test func aCourseOf360IsNorth() throws {
        let (report, _) = decode(tpv(#""lat":52.5,"lon":13.4,"track":360"#))
        guard case .fix(let location) = try #require(report) else {
            Issue.record("no fix")
            return
        }
        #expect(location.course == 0)
    }

    @Test func aHeldFixThatCannotBeTrueIsDroppedFromAPollReply() throws {
        let line = #"{"class":"POLL","time":"2025-06-01T12:00:06.000Z","active":1,"tpv":[{"class":"TPV","device":"/dev/a","mode":3,"time":"2025-06-01T12:00:05.000Z","lat":95,"lon":10}],"sky":[]}"#
        let (report, problems) = decode(line)
        #expect(report == .poll(time: GPSDTime.date(from: "2025-06-01T12:00:06.000Z"), reports: []))
        #expect(problems == [.latitude])
    }

    // MARK: Calendar times

    @Test(arguments: [
        "2025-06-01T12:00:05.000Z", "2025-06-01T12:00:05Z", "2024-02-29T00:00:00.5Z", "2016-12-31T23:59:60.000Z",
        "1980-01-06T00:00:00Z", "2099-12-31T23:59:59.999999Z",
    ])
    func calendarTimes(text: String) {
        #expect(Plausibility.isCalendarTime(Substring(text)))
    }

    @Test(arguments: [
        "2024-13-45T99:99:99Z", "2023-02-29T00:00:00Z", "2025-04-31T12:00:00Z", "2025-00-10T12:00:00Z",
        "2025-06-01T24:00:00Z", "2025-06-01T12:60:00Z", "2025-06-01T12:00:61Z", "1979-12-31T23:59:59Z",
        "2025-06-01 12:00:05Z", "2025-06-01T12:00:05", "2025-06-01T12:00:05.Z", "2025-6-01T12:00:05Z", "",
        "2025-06-01T12:00:05.00xZ",
    ])
    func notCalendarTimes(text: String) {
        #expect(!Plausibility.isCalendarTime(Substring(text)))
    }

    // MARK: Receivers coming and going

    @Test func aDeviceReportSaysWhetherTheReceiverIsThere() {
        let opened = #"{"class":"DEVICE","path":"/dev/pts/1","driver":"NMEA0183","activated":"2025-06-01T12:00:00.000Z","flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}"#
        #expect(decode(opened).0 == .device(path: "/dev/pts/1", active: true))
        let closed = #"{"class":"DEVICE","path":"/dev/pts/1","activated":0}"#
        #expect(decode(closed).0 == .device(path: "/dev/pts/1", active: false))
    }
}
