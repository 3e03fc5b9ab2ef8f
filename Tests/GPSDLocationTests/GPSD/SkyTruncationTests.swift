import Foundation
import GPSDLocation
import GPSDTestSupport
import Logging
import Testing

/// SKYs listing more satellites than libgps holds (its `MAXCHANNELS`: 140 in gpsd 3.22's libgps, 184 from 3.26), as a
/// newer gpsd or another server can send: libgps 3.22 kept the first 140 and counted none ("0 used of 140"). The
/// counts come from the list as sent, the view says it holds only part of it, and each such SKY is counted.
@Suite("SKY decoding: lists longer than libgps holds")
struct SkyTruncationTests {
    private let decoder: ReportDecoder

    init() throws { decoder = try ReportDecoder() }

    /// One entry of a SKY's list, as gpsd writes it.
    struct Entry {
        var gnssID: Int
        var svid: Int
        var prn: Int
        var constellation: Satellite.Constellation
        var used: Bool

        var json: String {
            #"{"PRN":\#(prn),"el":\#(10 + svid % 70).0,"az":\#(svid * 7 % 360).0,"ss":\#(20 + svid % 30).0,"#
                + #""used":\#(used),"gnssid":\#(gnssID),"svid":\#(svid)}"#
        }
    }

    /// The first `count` (at most 212) of every satellite of six systems, numbered as gpsd numbers them (PRN, `gnssid`,
    /// `svid`), system by system as gpsd lists them; every third one used.
    static func entries(_ count: Int) -> [Entry] {
        let systems: [(gnssID: Int, svids: ClosedRange<Int>, prnOffset: Int, Satellite.Constellation)] = [
            (0, 1...32, 0, .gps), (6, 1...32, 64, .glonass), (2, 1...36, 300, .galileo), (3, 1...63, 400, .beidou),
            (1, 120...158, 0, .sbas), (5, 1...10, 192, .qzss),
        ]
        let all = systems.flatMap { system in
            system.svids.map { Entry(gnssID: system.gnssID, svid: $0, prn: $0 + system.prnOffset, constellation: system.3, used: false) }
        }
        precondition(count <= all.count, "only \(all.count) satellites")
        return all.prefix(count).enumerated().map { index, entry in
            var entry = entry
            entry.used = index % 3 == 0
            return entry
        }
    }

    /// A SKY of gpsd 3.23 and later (with `nSat` and `uSat`) listing `entries`.
    static func line(_ entries: [Entry], second: Int = 5) -> String {
        #"{"class":"SKY","device":"/dev/ttyACM0","time":"\#(ReportLines.time(second))","hdop":0.6,"pdop":1.1,"#
            + #""nSat":\#(entries.count),"uSat":\#(entries.count(where: \.used)),"#
            + #""satellites":["# + entries.map(\.json).joined(separator: ",") + "]}"
    }

    private func sky(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SkyView {
        let report = try #require(decoder.decode(Array(line.utf8)), sourceLocation: sourceLocation)
        guard case .sky(let view, let listed) = report else {
            Issue.record("expected a SKY, got \(report)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        #expect(listed, sourceLocation: sourceLocation)
        return view
    }

    @Test("the generated list: six systems, every PRN once, the first 141 of four systems")
    func theSatellitesGenerated() {
        let all = Self.entries(212)
        #expect(Set(all.map(\.constellation)).count == 6)
        #expect(Set(all.map(\.prn)).count == 212, "every PRN once")
        #expect(Set(Self.entries(141).map(\.constellation)) == [.gps, .glonass, .galileo, .beidou])
    }

    @Test("the counts are the list's, whatever libgps holds", arguments: [140, 141, 212])
    func countsAreTheLists(count: Int) throws {
        let entries = Self.entries(count)
        let usedListed = entries.count(where: \.used)
        let view = try sky(Self.line(entries))
        #expect(view.visible == count)
        #expect(view.used == usedListed)
        #expect(view.used > 0)
        #expect(view.count == SatelliteCount(visible: count, used: usedListed))
        #expect(view.dilution == DilutionOfPrecision(horizontal: 0.6, position: 1.1), "members before the list are read")
        #expect(view.timestamp == Date(timeIntervalSince1970: ReportLines.epoch + 5))
    }

    @Test("a view holds the satellites libgps holds, and says so when the list was longer", arguments: [140, 141, 212])
    func truncationIsMarked(count: Int) throws {
        let capacity = ReportDecoder.libgpsSkyviewCapacity
        let entries = Self.entries(count)
        let view = try sky(Self.line(entries))
        let held = entries.prefix(capacity)
        #expect(view.satellites.map(\.prn) == held.map(\.prn))
        #expect(view.satellites.map(\.constellation) == held.map(\.constellation))
        #expect(view.satellites.map(\.id) == held.map(\.svid))
        #expect(view.satellites.map(\.isUsed) == held.map(\.used))
        #expect(view.isTruncated == (count > capacity))
        let truncations = decoder.problems.filter { $0.kind == .truncatedSky }
        #expect(truncations.count == (count > capacity ? 1 : 0), "\(decoder.problems)")
        #expect(decoder.problems.allSatisfy { $0.kind == .truncatedSky }, "nothing else is wrong: \(decoder.problems)")
        if count > capacity {
            #expect(truncations.first?.value == "\(count) listed, \(entries.count(where: \.used)) used; libgps holds \(capacity)")
        }
    }

    /// gpsd 3.22's libgps (API 11; up to API 13 at least) holds 140: then 141 is truncated and 140 is not (3.26's
    /// holds 184).
    @Test(.enabled(if: ReportDecoder.libgpsAPIVersion <= 13, "libgps from gpsd 3.20 to 3.23"))
    func gpsd322sLibgpsHolds140() throws {
        #expect(ReportDecoder.libgpsSkyviewCapacity == 140)
        #expect(try !sky(Self.line(Self.entries(140))).isTruncated)
        #expect(try sky(Self.line(Self.entries(141))).isTruncated)
        #expect(try sky(Self.line(Self.entries(212))).isTruncated)
    }

    @Test("the counts are the list's even when nSat and uSat say otherwise")
    func theCountsAreTheListsEvenWhenNSatAndUSatSayOtherwise() throws {
        let entries = Self.entries(141)
        let sent = #""nSat":141,"uSat":\#(entries.count(where: \.used)),"#
        let line = Self.line(entries).replacingOccurrences(of: sent, with: #""nSat":9,"uSat":3,"#)
        #expect(line != Self.line(entries), "the counts were replaced")
        let view = try sky(line)
        #expect(view.visible == 141)
        #expect(view.used == entries.count(where: \.used))
    }

    @Test("a truncated view says so in its JSON, and reads back the same")
    func aTruncatedViewSaysSoInItsJSON() throws {
        let entries = Self.entries(141)
        let view = try sky(Self.line(entries))
        #expect(view.isTruncated == (141 > ReportDecoder.libgpsSkyviewCapacity))
        #expect(view.jsonText.contains(#""used":\#(entries.count(where: \.used)),"truncated":true,"hdop""#) == view.isTruncated)
        let read = try JSONDecoder().decode(SkyView.self, from: Data(view.jsonText.utf8))
        #expect(read == view)
        #expect(try JSONDecoder().decode(SkyView.self, from: JSONEncoder().encode(view)) == view)
        let whole = try sky(Self.line(Self.entries(140)))
        #expect(!whole.jsonText.contains("truncated"))
    }
}

/// Truncated SKYs through a ``LocationManager``: counted in ``LocationManager/statistics``, logged once.
@Suite("LocationManager: SKYs longer than libgps holds", .timeLimit(.minutes(1)))
struct SkyTruncationManagerTests: ManagerTesting {
    let rig = ManagerRig()

    /// The events ``ReportReader`` hands on for `line`: what the decoder found in it, then the report.
    private func events(_ line: String, decoder: ReportDecoder) throws -> [SourceEvent] {
        let report = try #require(decoder.decode(Array(line.utf8)))
        return decoder.problems.map { .rejected($0) } + [.report(report)]
    }

    @Test("through a manager: each truncated SKY counted in statistics, the first logged")
    func eachTruncatedSkyIsCountedAndTheFirstLogged() throws {
        let logged = LoggedMessages()
        manager.logger = Logger(label: "test") { _ in logged }
        let decoder = try ReportDecoder()
        manager.startUpdatingLocation()
        let lines = [212, 140, 141, 212, 141].enumerated().map { second, count in
            SkyTruncationTests.line(SkyTruncationTests.entries(count), second: second)
        }
        let capacity = ReportDecoder.libgpsSkyviewCapacity
        let truncated = [212, 140, 141, 212, 141].count { $0 > capacity }
        for line in lines { source.send(try events(line, decoder: decoder)) }
        #expect(manager.statistics.truncatedSkies == truncated)
        #expect(manager.statistics.rejectedValues == 0)
        let said = logged.messages.filter { $0.contains("more satellites than libgps holds") }
        #expect(said.count == 1, "once: \(logged.messages)")
        let first = "212 listed, \(SkyTruncationTests.entries(212).count(where: \.used)) used; libgps holds \(capacity)"
        #expect(said.first?.contains(first) == true, "\(said)")
        #expect(said.first?.contains("the satellites past libgps's array are left out") == true, "\(said)")
        let sky = try #require(manager.sky)
        #expect(sky.isTruncated == (141 > capacity))
        #expect(manager.satellites == SatelliteCount(
            visible: 141, used: SkyTruncationTests.entries(141).count(where: \.used)))
        manager.stopUpdatingLocation()
    }

    @Test("a SKY without a list keeps the truncated list's counts")
    func aSkyWithoutAListKeepsTheTruncatedListsCounts() throws {
        let decoder = try ReportDecoder()
        manager.startUpdatingLocation()
        let entries = SkyTruncationTests.entries(212)
        source.send(.report(.noFix(second: 0, device: "/dev/ttyACM0")))   // the epoch's TPV, then its SKYs
        source.send(try events(SkyTruncationTests.line(entries), decoder: decoder))
        source.send(try events(#"{"class":"SKY","device":"/dev/ttyACM0","hdop":0.7,"uSat":9}"#, decoder: decoder))
        // The next epoch's TPV ends the epoch of the two SKYs: its view is passed on whole.
        source.send(.report(.noFix(second: 1, device: "/dev/ttyACM0")))
        let sky = try #require(manager.sky)
        #expect(sky.used == entries.count(where: \.used))
        #expect(sky.visible == 212)
        #expect(sky.isTruncated == (212 > ReportDecoder.libgpsSkyviewCapacity))
        #expect(sky.dilution.horizontal == 0.7)
        manager.stopUpdatingLocation()
    }
}
