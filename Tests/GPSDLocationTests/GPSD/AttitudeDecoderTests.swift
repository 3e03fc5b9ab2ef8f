import Foundation
import GPSDLocation
import Testing

/// ATT reports as gpsd sends them: recorded from gpsd 3.22 and 3.25 fed `$GPHDT` through gpsfake, and the example
/// of `man gpsd_json`; and the values the decoder must refuse.
@Suite("ReportDecoder: ATT")
struct AttitudeDecoderTests {
    /// 2025-06-01T12:00:00Z.
    private static let epoch = 1_748_779_200.0

    /// What gpsd 3.22 sent for an epoch of `$GPRMC`, `$GPGGA`, `$GPGSA`, `$GPHDT,46.5,T` (gpsfake, Debian 12): the
    /// TPV carries gpsd's own magnetic variation, the ATT neither a time nor a magnetic heading.
    private static let tpv322 = """
        {"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2025-06-01T12:00:01.000Z","ept":0.005,\
        "lat":48.137154000,"lon":11.576124000,"altHAE":566.0000,"altMSL":519.0000,"alt":519.0000,"epv":36.800,\
        "track":10.0000,"magtrack":13.3414,"magvar":3.3,"speed":5.000,"climb":0.000,"epc":73.60,\
        "geoidSep":47.000,"eph":28.500,"sep":41.800}
        """
    private static let att322 = #"{"class":"ATT","device":"/dev/pts/1","heading":46.500}"#

    private let decoder: ReportDecoder

    init() throws { decoder = try ReportDecoder() }

    private func decode(_ line: String) -> GPSDReport? {
        decoder.decode(Array(line.utf8))
    }

    private func heading(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Heading {
        let report = try #require(decode(line), sourceLocation: sourceLocation)
        guard case .attitude(let heading, _) = report else {
            Issue.record("expected a heading, got \(report)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return heading
    }

    @Test func gpsd322sHDTAfterItsTPVIsAHeadingWithTheTPVsTimeAndVariation() throws {
        guard case .fix(let fix) = try #require(decode(Self.tpv322)) else {
            Issue.record("the TPV is a fix")
            return
        }
        #expect(fix.course == 10)   // course over ground: the TPV's, never a heading
        let heading = try heading(Self.att322)
        #expect(heading.trueHeading == 46.5)
        // gpsd's magvar, east positive: magnetic north is 3.3° east of true north.
        #expect(abs(try #require(heading.magneticHeading) - 43.2) < 1e-9)
        #expect(heading.timestamp == Date(timeIntervalSince1970: Self.epoch + 1))
        #expect(heading.device == "/dev/pts/1")
        #expect(heading.pitch == nil && heading.roll == nil && heading.headingAccuracy == nil)
        #expect(decoder.problems.isEmpty)
    }

    @Test func theReportSaysWhetherTheTimeIsTheATTsOwn() throws {
        _ = decode(Self.tpv322)
        guard case .attitude(let borrowed, let timed)? = decode(Self.att322) else {
            Issue.record("a heading")
            return
        }
        #expect(borrowed.timestamp == Date(timeIntervalSince1970: Self.epoch + 1) && !timed, "the TPV's time")
        let own = decode(#"{"class":"ATT","device":"/dev/pts/1","time":"2025-06-01T12:00:05.250Z","heading":46.5}"#)
        guard case .attitude(let heading, let ownTimed)? = own else {
            Issue.record("a heading")
            return
        }
        #expect(heading.timestamp == Date(timeIntervalSince1970: Self.epoch + 5.25) && ownTimed)
    }

    @Test("a receiver that went lends the headings it sends once back no time from before, but its variation",
          arguments: [#"{"class":"DEVICE","path":"/dev/pts/1","activated":0}"#, #"{"class":"DEVICES","devices":[]}"#])
    func aReceiverThatWentLendsNoTimeFromBefore(gone: String) throws {
        _ = decode(Self.tpv322)
        let report = try #require(decode(gone))
        #expect(report == .device(path: "/dev/pts/1", active: false) || report == .devices(count: 0))
        let back = try heading(Self.att322)
        #expect(back.timestamp == nil)
        #expect(abs(try #require(back.magneticHeading) - 43.2) < 1e-9)
        // Another receiver's going changes nothing.
        _ = decode(Self.tpv322)
        _ = decode(#"{"class":"DEVICE","path":"/dev/ttyUSB0","activated":0}"#)
        #expect(try heading(Self.att322).timestamp == Date(timeIntervalSince1970: Self.epoch + 1))
    }

    @Test func anATTBeforeAnyTPVHasNoTimeAndNoMagneticHeading() throws {
        let heading = try heading(Self.att322)
        #expect(heading == Heading(trueHeading: 46.5, device: "/dev/pts/1"))
    }

    @Test func anotherReceiversTPVLendsNothing() throws {
        _ = decode(Self.tpv322.replacingOccurrences(of: "/dev/pts/1", with: "/dev/ttyUSB0"))
        let heading = try heading(Self.att322)
        #expect(heading.timestamp == nil)
        #expect(heading.magneticHeading == nil)
    }

    /// The fix lost: the TPV dates the epoch, and the receiver's last variation still turns the heading magnetic
    /// (it changes by degrees over hundreds of kilometres, not in the time a fix is lost).
    @Test func aTPVWithoutAFixDatesTheEpochAndKeepsTheLastVariation() throws {
        _ = decode(Self.tpv322)
        _ = decode(#"{"class":"TPV","device":"/dev/pts/1","mode":1,"time":"2025-06-01T12:00:02.000Z"}"#)
        let gyro = try heading(Self.att322)
        #expect(gyro.timestamp == Date(timeIntervalSince1970: Self.epoch + 2))
        #expect(abs(try #require(gyro.magneticHeading) - 43.2) < 1e-9)
    }

    /// A magnetic compass alone (`$HDM`: gpsd 3.25's ATT with `mheading` only) still gives true north while the
    /// fix is lost, by the last variation.
    @Test(.enabled(if: ReportDecoder.libgpsReadsMagneticHeading))
    func aCompassAloneKeepsTrueNorthWhileTheFixIsLost() throws {
        _ = decode(Self.tpv322)
        _ = decode(#"{"class":"TPV","device":"/dev/pts/1","mode":1,"time":"2025-06-01T12:00:02.000Z"}"#)
        let compass = try heading(#"{"class":"ATT","device":"/dev/pts/1","mheading":10.000}"#)
        #expect(abs(compass.trueHeading - 13.3) < 1e-9 && compass.magneticHeading == 10)
    }

    @Test func aNewVariationReplacesTheLast() throws {
        _ = decode(Self.tpv322)
        _ = decode(Self.tpv322.replacingOccurrences(of: #""magvar":3.3"#, with: #""magvar":-1.5"#))
        let heading = try heading(Self.att322)
        #expect(abs(try #require(heading.magneticHeading) - 48.0) < 1e-9)
    }

    @Test func anATTsOwnTimeAndMagneticHeadingComeFirst() throws {
        _ = decode(Self.tpv322)
        let line = """
            {"class":"ATT","device":"/dev/pts/1","time":"2025-06-01T12:00:05.250Z","heading":359.500,\
            "mheading":356.100,"pitch":-2.125,"roll":1.500}
            """
        let heading = try heading(line)
        #expect(heading.trueHeading == 359.5)
        #expect(heading.timestamp == Date(timeIntervalSince1970: Self.epoch + 5.25))
        #expect(heading.pitch == -2.125)
        #expect(heading.roll == 1.5)
        // libgps reads mheading from 3.25 on; an older one leaves the TPV's variation to make one.
        let magnetic = try #require(heading.magneticHeading)
        #expect(abs(magnetic - (ReportDecoder.libgpsReadsMagneticHeading ? 356.1 : 356.2)) < 1e-9)
    }

    @Test func aMagneticHeadingWrapsRoundNorth() throws {
        _ = decode(Self.tpv322.replacingOccurrences(of: #""magvar":3.3"#, with: #""magvar":-12.5"#))
        let west = try heading(#"{"class":"ATT","device":"/dev/pts/1","heading":350.000}"#)
        #expect(abs(try #require(west.magneticHeading) - 2.5) < 1e-9)
        _ = decode(Self.tpv322)
        let east = try heading(#"{"class":"ATT","device":"/dev/pts/1","heading":1.000}"#)
        #expect(abs(try #require(east.magneticHeading) - 357.7) < 1e-9)
    }

    /// The evidence's track: `"heading":34.15,"magneticHeading":30.049999999999997` in whereami's JSON. A heading
    /// made of gpsd's heading and its variation has their decimals, exactly, wherever it wraps round north.
    @Test("a magnetic heading is the true heading less the variation at their precision, not binary noise", arguments: [
        ("34.150", "4.1", 30.05), ("69.670", "4.1", 65.57), ("46.500", "3.3", 43.2), ("2.300", "4.1", 358.2),
        ("350.070", "-12.5", 2.57), ("359.990", "-0.01", 0), ("0.050", "0.1", 359.95),
    ])
    func aMagneticHeadingHasTheDecimalsOfItsParts(trueHeading: String, variation: String, magnetic: Double) throws {
        _ = decode(Self.tpv322.replacingOccurrences(of: #""magvar":3.3"#, with: #""magvar":\#(variation)"#))
        let made = try heading(#"{"class":"ATT","device":"/dev/pts/1","heading":\#(trueHeading)}"#)
        #expect(made.magneticHeading == magnetic, "\(String(describing: made.magneticHeading))")
        #expect(made.magneticHeading.map(JSONText.number) == JSONText.number(magnetic))
    }

    /// A compass alone: the true heading is its magnetic heading plus the variation, at their precision.
    @Test(.enabled(if: ReportDecoder.libgpsReadsMagneticHeading))
    func aTrueHeadingMadeOfACompassHasTheDecimalsOfItsParts() throws {
        _ = decode(Self.tpv322.replacingOccurrences(of: #""magvar":3.3"#, with: #""magvar":4.1"#))
        let compass = try heading(#"{"class":"ATT","device":"/dev/pts/1","mheading":30.050}"#)
        #expect(compass.trueHeading == 34.15)
    }

    /// What gpsd 3.25 sent for `$HCHDM,40.0,M` (a magnetic compass) after a TPV with its magnetic variation: a
    /// true heading is made of the two. (libgps before 3.25 does not read mheading.)
    @Test(.enabled(if: ReportDecoder.libgpsReadsMagneticHeading))
    func gpsd325sHDMWithTheTPVsVariationIsATrueHeading() throws {
        _ = decode(Self.tpv322)
        let heading = try heading(#"{"class":"ATT","device":"/dev/pts/1","mheading":40.000}"#)
        #expect(abs(heading.trueHeading - 43.3) < 1e-9)
        #expect(heading.magneticHeading == 40)
        #expect(heading.timestamp == Date(timeIntervalSince1970: Self.epoch + 1))
    }

    @Test func aMagneticHeadingWithoutAVariationIsNoHeading() {
        #expect(decode(#"{"class":"ATT","device":"/dev/pts/1","mheading":40.000}"#) == .other)
    }

    /// What gpsd 3.22 and 3.25 sent for a True North compass's `$PTNTHTM,46.5,N,1.5,N,-2.2,N,60.0,2454`.
    @Test(arguments: [
        #"{"class":"ATT","device":"/dev/pts/1","heading":46.500,"mag_st":"N","pitch":1.50,"pitch_st":"N","roll":-2.20,"roll_st":"N","dip":60.000,"mag_x":2454.000}"#,
        #"{"class":"ATT","device":"/dev/pts/1","heading":46.500,"mag_st":"N","pitch":1.500,"pitch_st":"N","roll":-2.200,"roll_st":"N","dip":60.000,"mag_x":2454.00000}"#,
    ])
    func aTrueNorthCompassGivesPitchAndRoll(line: String) throws {
        let heading = try heading(line)
        #expect(heading == Heading(trueHeading: 46.5, pitch: 1.5, roll: -2.2, device: "/dev/pts/1"))
    }

    @Test func aHeadingOf360IsNorth() throws {
        #expect(try heading(#"{"class":"ATT","device":"/dev/pts/1","heading":360.000}"#).trueHeading == 0)
    }

    @Test func pitchAndRollAloneAreNoHeading() {
        #expect(decode(#"{"class":"ATT","device":"/dev/ttyACM0","pitch":1.25,"roll":-3.5}"#) == .other)
        // What gpsd 3.25 sent for `$GPROT,1.5,A`: a rate of turn alone.
        #expect(decode(#"{"class":"ATT","device":"/dev/pts/1","rot":1.500}"#) == .other)
        #expect(decoder.problems.isEmpty)
    }

    /// `man gpsd_json`'s example of a TNT compass's ATT is no heading: libgps (3.22) stops at its time, a number,
    /// and reads none of it; without the time, its heading, 14223, is no angle.
    @Test func theManPagesExampleIsNoHeading() {
        let members = """
            "heading":14223.00,"mag_st":"N","pitch":169.00,"pitch_st":"N","roll":-43.00,"roll_st":"N",\
            "dip":13641.000,"mag_x":2454.000}
            """
        let report = decode(#"{"class":"ATT","time":1270938096.843,"# + members)
        #expect(report == nil || report == .other)
        #expect(decode(#"{"class":"ATT","# + members) == .other)
        #expect(decoder.problems.map(\.kind) == [.heading])
    }

    @Test(arguments: [
        (#""heading":361.0"#, ReportProblem.Kind.heading),
        (#""heading":-0.5"#, ReportProblem.Kind.heading),
        (#""heading":1e308"#, ReportProblem.Kind.heading),
    ])
    func aHeadingThatCannotBeTrueIsNoHeading(member: String, kind: ReportProblem.Kind) {
        #expect(decode(#"{"class":"ATT","device":"/dev/pts/1",\#(member)}"#) == .other)
        #expect(decoder.problems.map(\.kind) == [kind])
    }

    @Test(arguments: [
        (#""pitch":90.5"#, ReportProblem.Kind.attitude),
        (#""roll":-180.5"#, ReportProblem.Kind.attitude),
        (#""mheading":400"#, ReportProblem.Kind.heading),
    ])
    func anotherValueThatCannotBeTrueIsLeftOut(member: String, kind: ReportProblem.Kind) throws {
        let heading = try heading(#"{"class":"ATT","device":"/dev/pts/1","heading":10.0,\#(member)}"#)
        #expect(heading == Heading(trueHeading: 10, device: "/dev/pts/1"))
        // libgps before 3.25 does not read mheading: nothing to refuse.
        let expected = kind == .heading && !ReportDecoder.libgpsReadsMagneticHeading ? [] : [kind]
        #expect(decoder.problems.map(\.kind) == expected)
    }

    @Test func aMagneticVariationThatCannotBeTrueLendsNone() throws {
        _ = decode(Self.tpv322.replacingOccurrences(of: #""magvar":3.3"#, with: #""magvar":181.0"#))
        #expect(decoder.problems.map(\.kind) == [.magneticVariation])
        let heading = try heading(Self.att322)
        #expect(heading.magneticHeading == nil)
        #expect(heading.timestamp == Date(timeIntervalSince1970: Self.epoch + 1))
    }

    @Test func anATTWhoseTimeIsNoCalendarTimeKeepsItsHeadingWithoutTheTime() throws {
        let heading = try heading(#"{"class":"ATT","device":"/dev/pts/1","time":"2024-13-45T99:99:99Z","heading":5.0}"#)
        #expect(heading.trueHeading == 5)
        #expect(heading.timestamp == nil)
        #expect(decoder.problems.map(\.kind) == [.time])
    }

    /// gpsd 3.22 writes an ATT that has a time with two commas in a row (`"device":"…",,"time"`): not JSON, not a
    /// report. (None of 3.22's NMEA drivers sets an ATT's time, so its NMEA headings never have one.)
    @Test func gpsd322sATTWithATimeIsNotJSON() {
        #expect(decode(#"{"class":"ATT","device":"/dev/pts/1",,"time":"2025-06-01T12:00:05.000Z","heading":46.500}"#) == nil)
    }

    @Test func aTPVsCourseIsNeverAHeading() {
        let report = decode(#"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2025-06-01T12:00:05.000Z","lat":1.0,"lon":2.0,"track":46.5,"magtrack":43.2}"#)
        guard case .fix(let fix) = report else {
            Issue.record("expected a fix, got \(String(describing: report))")
            return
        }
        #expect(fix.course == 46.5)
    }

    @Test func theAngleBetweenHeadingsWrapsRound360() {
        #expect(Heading(trueHeading: 350).angle(from: Heading(trueHeading: 10)) == 20)
        #expect(Heading(trueHeading: 10).angle(from: Heading(trueHeading: 350)) == 20)
        #expect(Heading(trueHeading: 90).angle(from: Heading(trueHeading: 270)) == 180)
        #expect(Heading(trueHeading: 0.5).passes(headingFilter: 1, since: Heading(trueHeading: 359.5)))
        #expect(!Heading(trueHeading: 0.25).passes(headingFilter: 1, since: Heading(trueHeading: 359.5)))
        #expect(Heading(trueHeading: 0.25).passes(headingFilter: nil, since: Heading(trueHeading: 0.25)))
        #expect(Heading(trueHeading: 0.25).passes(headingFilter: 0, since: Heading(trueHeading: 0.25)))
        #expect(Heading(trueHeading: 0.25).passes(headingFilter: 30, since: nil))
    }
}
