import ArgumentParser
import Foundation
import GPSDLocation
import Testing
@testable import WhereAmICore

/// --sky in-process: its command line and its table.
@Suite("whereami --sky, in-process")
struct SkyTests {
    @Test("--sky waits for the satellites as one fix waits, in text or json")
    func skyOptions() throws {
        let command = try WhereAmI.parse(["--sky"])
        #expect(command.satellites.sky && command.output.format == .text)
        #expect(command.request.firstFixTimeout == Seconds(30))
        let json = try WhereAmI.parse(["--sky", "--format", "json", "--timeout", "5", "-q", "--demo"])
        #expect(json.satellites.sky && json.output.format == .json && json.request.firstFixTimeout == Seconds(5))
        #expect(try !WhereAmI.parse([]).satellites.sky)
    }

    @Test("--sky refuses what is about fixes", arguments: [
        (["--format", "csv"], "not csv"), (["--format", "geojson"], "not geojson"), (["--format", "gpx"], "not gpx"),
        (["--follow"], "--follow"), (["--watch"], "--watch"), (["--accuracy", "5"], "--accuracy"),
        (["--max-age", "10"], "--max-age"),
    ] as [([String], String)])
    func refusals(arguments: [String], says: String) throws {
        #expect(throws: (any Error).self) { try WhereAmI.parse(["--sky"] + arguments) }
        do {
            _ = try WhereAmI.parse(["--sky"] + arguments)
        } catch {
            #expect(WhereAmI.message(for: error).contains(says), "\(WhereAmI.message(for: error))")
            #expect(WhereAmI.exitCode(for: error) == .validationFailure)
        }
        _ = try WhereAmI.parse(arguments)   // the same without --sky is a fix's command line
    }

    // MARK: The table

    @Test("the table: counts, in all and per system, DOPs, a row per satellite, '-' for what is unknown")
    func table() {
        let sky = SkyView(
            satellites: [
                Satellite(constellation: .gps, id: 2, prn: 2, elevation: 63, azimuth: 95, signalStrength: 44.4,
                          isUsed: true, health: .healthy),
                Satellite(constellation: .beidou, id: 34, prn: 434),
            ],
            visible: 3, dilution: .init(horizontal: 0.71, position: 1.3),
            timestamp: Date(timeIntervalSince1970: 1_748_779_205), device: "/dev/tty\u{1B}[2J")
        #expect(SkyTable.text(sky) == """
            Satellites: 1 used of 3 visible (/dev/tty\u{FFFD}[2J)
            Systems:    GPS 1/1, BeiDou 0/1 (used/visible)
            DOP:        HDOP 0.71, PDOP 1.30
            Time:       2025-06-01T12:00:05.000Z

            System  ID  PRN  Elev  Azim  C/N0  Used  Health
            GPS      2    2    63    95    44  yes   healthy
            BeiDou  34  434     -     -     -  no    -

            """)
    }

    @Test("a view truncated by libgps: the whole list's counts, then a line saying the rows are the first ones")
    func truncatedTable() {
        let satellites = (1...140).map { Satellite(constellation: .gps, id: $0, prn: $0, isUsed: $0 % 3 == 1) }
        let sky = SkyView(satellites: satellites, visible: 141, used: 47, isTruncated: true)
        let lines = SkyTable.text(sky).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.prefix(3) == ["Satellites: 47 used of 141 visible", "Listed:     the first 140 (libgps holds no more)",
                                    "Systems:    GPS 47/140 (used/visible)"])
        #expect(!SkyTable.text(SkyView(satellites: satellites)).contains("Listed:"))
    }
}
