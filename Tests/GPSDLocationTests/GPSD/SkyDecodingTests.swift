import Foundation
import GPSDLocation
import Testing

/// SKY reports of every constellation, as gpsd 3.18 and later write them (with `gnssid` and `svid`) and as older
/// releases did (the PRN alone), and SKYs with values that cannot be true.
@Suite("SKY decoding")
struct SkyDecodingTests {
    private let decoder: ReportDecoder

    init() throws { decoder = try ReportDecoder() }

    private func sky(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SkyView {
        let report = try #require(decoder.decode(Array(line.utf8)), sourceLocation: sourceLocation)
        guard case .sky(let view, _) = report else {
            Issue.record("expected a SKY, got \(report)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return view
    }

    /// One satellite of each system, with gpsd's PRN, `gnssid` and `svid` as gpsd 3.22 writes them for a
    /// receiver's NMEA 4.10 GSV sentences (GP, SB, GA, GB, QZ, GL, GI talkers) and u-blox binary.
    private static let everySystem = """
        {"class":"SKY","device":"/dev/ttyACM0","time":"2025-06-01T12:00:05.000Z","hdop":0.8,"pdop":1.4,\
        "satellites":[\
        {"PRN":5,"el":31.0,"az":86.0,"ss":40.0,"used":true,"gnssid":0,"svid":5},\
        {"PRN":131,"el":28.0,"az":196.0,"ss":37.0,"used":false,"gnssid":1,"svid":131},\
        {"PRN":311,"el":52.0,"az":120.0,"ss":42.0,"used":true,"gnssid":2,"svid":11,"health":1},\
        {"PRN":419,"el":18.0,"az":330.0,"ss":29.0,"used":true,"gnssid":3,"svid":19},\
        {"PRN":174,"el":60.0,"az":10.0,"ss":20.0,"used":false,"gnssid":4,"svid":2},\
        {"PRN":194,"el":70.0,"az":170.0,"ss":44.0,"used":true,"gnssid":5,"svid":2},\
        {"PRN":70,"el":45.0,"az":250.0,"ss":35.0,"used":true,"gnssid":6,"svid":6,"health":2},\
        {"PRN":0,"el":40.0,"az":100.0,"ss":33.0,"used":false,"gnssid":7,"svid":4}]}
        """

    @Test func everyConstellationIsNamedByItsGNSSIDAndSVID() throws {
        let view = try sky(Self.everySystem)
        #expect(view.satellites.map(\.constellation) == [.gps, .sbas, .galileo, .beidou, .imes, .qzss, .glonass, .navic])
        #expect(view.satellites.map(\.id) == [5, 131, 11, 19, 2, 2, 6, 4])
        #expect(view.satellites.map(\.prn) == [5, 131, 311, 419, 174, 194, 70, 0])
        #expect(view.satellites.map(\.elevation) == [31, 28, 52, 18, 60, 70, 45, 40])
        #expect(view.satellites.map(\.azimuth) == [86, 196, 120, 330, 10, 170, 250, 100])
        #expect(view.satellites.map(\.signalStrength) == [40, 37, 42, 29, 20, 44, 35, 33])
        #expect(view.satellites.map(\.isUsed) == [true, false, true, true, false, true, true, false])
        #expect(view.satellites.map(\.health) == [nil, nil, .healthy, nil, nil, nil, .unhealthy, nil])
        #expect(view.used == 5)
        #expect(view.visible >= 7)   // libgps counts those with a PRN; the NavIC one has none
        #expect(view.dilution == DilutionOfPrecision(horizontal: 0.8, position: 1.4))
        #expect(view.device == "/dev/ttyACM0")
        #expect(view.timestamp == Date(timeIntervalSince1970: 1_748_779_205))
    }

    /// gpsd before 3.18 sent the PRN alone: the system and number come from its range.
    @Test(arguments: [
        (5, Satellite.Constellation.gps, 5), (32, .gps, 32), (33, .sbas, 120), (51, .sbas, 138),
        (65, .glonass, 1), (96, .glonass, 32), (131, .sbas, 131), (158, .sbas, 158), (173, .imes, 1),
        (193, .qzss, 1), (202, .qzss, 10), (301, .galileo, 1), (336, .galileo, 36), (401, .beidou, 1),
        (437, .beidou, 37), (100, .unknown, 100), (250, .unknown, 250),
    ])
    func aPRNAloneIsNamedByItsRange(prn: Int, constellation: Satellite.Constellation, id: Int) throws {
        let view = try sky(#"{"class":"SKY","satellites":[{"PRN":\#(prn),"el":10,"az":20,"ss":30,"used":true}]}"#)
        let satellite = try #require(view.satellites.first)
        #expect(satellite.constellation == constellation)
        #expect(satellite.id == id)
        #expect(satellite.prn == prn)
        #expect(Satellite.identity(prn: prn) == (constellation, id))
    }

    @Test func aSatelliteNotTrackedHasNoSignalOrPlace() throws {
        // gpsd writes what the receiver gave: a GSV entry with no elevation, azimuth or SNR.
        let view = try sky(#"{"class":"SKY","satellites":[{"PRN":12,"used":false}]}"#)
        #expect(view.satellites == [Satellite(constellation: .gps, id: 12, prn: 12)])
        #expect(decoder.problems.isEmpty)
    }

    @Test("values that cannot be true never reach a user, and the rest of the report does")
    func impossibleValuesAreLeftOut() throws {
        let line = """
            {"class":"SKY","hdop":-3,"vdop":1e300,"pdop":1.5,"satellites":[\
            {"PRN":7,"el":95.0,"az":400.0,"ss":300.0,"used":true},\
            {"PRN":8,"el":-91,"az":-1,"ss":-5,"used":true},\
            {"PRN":9,"el":90,"az":360,"ss":254,"used":true},\
            {"PRN":30000,"el":10,"az":10,"ss":10,"used":false}]}
            """
        let view = try sky(line)
        #expect(view.satellites == [
            Satellite(constellation: .gps, id: 7, prn: 7, isUsed: true),
            Satellite(constellation: .gps, id: 8, prn: 8, isUsed: true),
            Satellite(constellation: .gps, id: 9, prn: 9, elevation: 90, azimuth: 0, signalStrength: 254, isUsed: true),
        ])
        #expect(view.dilution == DilutionOfPrecision(position: 1.5))
        let kinds = decoder.problems.map(\.kind)
        #expect(kinds.count(where: { $0 == .elevation }) == 2)
        #expect(kinds.count(where: { $0 == .azimuth }) == 2)
        #expect(kinds.count(where: { $0 == .signal }) == 2)
        #expect(kinds.count(where: { $0 == .dilution }) == 2)
        #expect(kinds.contains(.satellite))
        #expect(Plausibility.impossibility(of: view) == nil)
    }

    @Test func aSkyWithoutAListSaysSo() throws {
        let report = decoder.decode(Array(#"{"class":"SKY","device":"/dev/ttyACM0","hdop":0.9,"uSat":6}"#.utf8))
        guard case .sky(let view, let listed)? = report else {
            Issue.record("expected a SKY, got \(String(describing: report))")
            return
        }
        #expect(!listed)
        #expect(view.satellites.isEmpty)
        #expect(view.dilution.horizontal == 0.9)
        let full = decoder.decode(Array(Self.everySystem.utf8))
        guard case .sky(_, let fullListed)? = full else { return }
        #expect(fullListed)
    }
}
