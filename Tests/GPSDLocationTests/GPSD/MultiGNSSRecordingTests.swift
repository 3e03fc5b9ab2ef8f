import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Every SKY gpsd 3.22 sent for `multignss.nmea` (GPS with SBAS and QZSS, GLONASS, Galileo, BeiDou in NMEA 4.10),
/// decoded as recorded and as a gpsd before 3.18 would have sent it (no `gnssid`, no `svid`).
@Suite("SKY decoding: the multi-constellation recording")
struct MultiGNSSRecordingTests {
    /// The recording's SKY lines, in order, without their line ends.
    static let lines = (try? MultiGNSSRecording.skyLines()) ?? []

    /// A line as gpsd before 3.18 wrote it: each satellite named by its PRN alone.
    static func withoutIdentity(_ line: String) -> String {
        line.replacing(/,"gnssid":\d+,"svid":\d+/, with: "")
    }

    private func decode(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SkyView {
        let decoder = try ReportDecoder()
        let report = try #require(decoder.decode(Array(line.utf8)), sourceLocation: sourceLocation)
        #expect(decoder.problems.isEmpty, "\(decoder.problems)", sourceLocation: sourceLocation)
        guard case .sky(let view, listed: true) = report else {
            Issue.record("expected a SKY with satellites, got \(report)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return view
    }

    /// gpsd's own members of each satellite of a line.
    private func reported(_ line: String) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return try #require(object["satellites"] as? [[String: Any]])
    }

    @Test func theRecordingHasEverySKY() {
        // 4 in the first epoch (after each system's GSV set), 3 in each of the 11 others: see make-fixtures.py.
        #expect(Self.lines.count == 37)
    }

    @Test("every satellite of every SKY, as gpsd reported it", arguments: lines.indices)
    func everySatelliteAsReported(index: Int) throws {
        let line = Self.lines[index]
        let view = try decode(line)
        let members = try reported(line)
        try #require(view.satellites.count == members.count)
        for (satellite, member) in zip(view.satellites, members) {
            let gnssID = try #require(member["gnssid"] as? Int)
            #expect(satellite.constellation == Satellite.Constellation(gnssID: gnssID))
            #expect(satellite.id == member["svid"] as? Int)
            #expect(satellite.prn == member["PRN"] as? Int)
            #expect(satellite.elevation == member["el"] as? Double)
            #expect(satellite.azimuth == member["az"] as? Double)
            #expect(satellite.signalStrength == member["ss"] as? Double)
            #expect(satellite.isUsed == member["used"] as? Bool)
            #expect(satellite.health == nil)
        }
        #expect(view.visible == members.count)
        #expect(view.used == members.count(where: { $0["used"] as? Bool == true }))
        #expect(view.device?.hasPrefix("/dev/") == true, "gpsfake's pseudo-terminal")
        #expect(view.timestamp == nil, "gpsd 3.22 gives an NMEA SKY no time")
        #expect(view.dilution.horizontal == 0.71 && view.dilution.position == 1.32 && view.dilution.vertical == 1.11)
    }

    @Test("without gnssid and svid, the PRN names the same satellites", arguments: lines.indices)
    func thePRNFallbackNamesTheSameSatellites(index: Int) throws {
        let line = Self.lines[index]
        let stripped = Self.withoutIdentity(line)
        #expect(!stripped.contains("svid"))
        #expect(try decode(stripped) == decode(line))
    }

    /// Each epoch's last SKY (all 26 satellites) against what the NMEA means (multignss.sky.expected.json):
    /// elevation, azimuth and C/N0 as written; names and use as written except where gpsd 3.22 departs from the
    /// NMEA (the fixture script lists why).
    @Test func eachEpochAgainstTheNMEA() throws {
        let epochs = try ExpectedSky.load("multignss.sky.expected.json")
        let complete = try MultiGNSSRecording.completeViews()
        try #require(complete.count == epochs.count)
        for (view, epoch) in zip(complete, epochs) {
            try #require(view.satellites.count == epoch.satellites.count)
            var renamed: [String] = [], usedOtherwise: [String] = []
            for (satellite, expected) in zip(view.satellites, epoch.satellites) {
                let name = "\(expected.constellation) \(expected.id)"
                #expect(satellite.elevation == expected.elevation, "\(epoch.time) \(name)")
                #expect(satellite.azimuth == expected.azimuth, "\(epoch.time) \(name)")
                #expect(satellite.signalStrength == expected.signal, "\(epoch.time) \(name)")
                if (satellite.constellation.rawValue, satellite.id, satellite.prn) != (expected.constellation, expected.id, expected.prn) {
                    renamed.append("\(name) as \(satellite.constellation) \(satellite.id) (PRN \(satellite.prn))")
                }
                if satellite.isUsed != expected.used { usedOtherwise.append(name) }
            }
            // gpsd 3.22 takes a GSV set's system from its first sentence only, so BeiDou 34 (past 32, in the
            // second) falls in NMEA's SBAS range; and it reads $GNGSA's numbers as GPS PRNs, so Galileo 25 used
            // marks GPS 25 used, and no Galileo or BeiDou satellite is.
            #expect(renamed == ["BeiDou 34 as SBAS 121 (PRN 34)"], "\(epoch.time)")
            let galileoAndBeiDouUsed = epoch.satellites.filter { $0.used && ["Galileo", "BeiDou"].contains($0.constellation) }
            #expect(usedOtherwise == ["GPS 25"] + galileoAndBeiDouUsed.map { "\($0.constellation) \($0.id)" },
                    "\(epoch.time)")
        }
    }
}
