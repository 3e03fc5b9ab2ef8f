import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Headings from a real gpsd, fed heading sentences by gpsfake. Which sentences gpsd turns into ATT depends on its
/// release (Sources/GPSDLocation/Docs.docc/HeadingSources.md): the tests take the release from the libgps they are built against, which
/// is gpsd's own on Debian (and in Scripts/test-compat's roots).
@Suite("Headings from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveHeadingTests {
    /// gpsd's magnetic variation at 52.5° N 13.4° E in June 2025, from its own magnetic model: gpsd 3.22 and 3.25
    /// write it in each TPV (`"magvar":4.1`) though the receiver sent none.
    private static let variation = 4.1

    /// Epochs of a 3D fix at one a second, moving east (course 90°, never a heading), each followed by `sentence`
    /// with its heading; then the headings gpsd's ATTs give, in order, each checked against its epoch's time.
    private func headings(
        _ sentence: String, _ values: [Double], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [Heading] {
        let cycles = values.indices.map { second in
            NMEA.Track.epoch(second) + NMEA.sentence(String(format: sentence, values[second]))
        }
        return try await withScratchDirectory { directory in
            let log = try writeLog(cycles, named: "heading.nmea", in: directory)
            return try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 30, waitForClient: true) { fake in
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                var headings: [Heading] = []
                for try await heading in gps.headingUpdates(filter: nil, bufferingPolicy: .unbounded) {
                    headings.append(heading)
                    if heading.timestamp == NMEA.Track.time(values.count - 1) { break }
                }
                #expect(gps.manager.heading == headings.last, sourceLocation: sourceLocation)
                await gps.stop()
                return headings
            }
        }
    }

    /// 350° to 15°, across north.
    private static let turning: [Double] = [350, 355, 0, 5, 10, 15]

    @Test("$GPHDT (a dual-antenna receiver's true heading) becomes a heading, on every release")
    func trueHeadingSentences() async throws {
        let headings = try await headings("GPHDT,%.1f,T", Self.turning)
        // gpsd 3.22 sends an ATT as each HDT comes, 3.25 with the epoch's TPV: one an epoch either way. A repeat
        // would be the same heading again.
        var seen: [Heading] = []
        for heading in headings where seen.last != heading { seen.append(heading) }
        #expect(seen.map(\.trueHeading) == Self.turning)
        #expect(seen.map(\.timestamp) == Self.turning.indices.map(NMEA.Track.time))
        for heading in seen {
            let magnetic = try #require(heading.magneticHeading)
            let expected = (heading.trueHeading - Self.variation + 360).truncatingRemainder(dividingBy: 360)
            #expect(abs(magnetic - expected) < 1e-9, "\(heading)")
        }
    }

    @Test("$HEHDT (a gyrocompass) becomes a heading from gpsd 3.23.1 on",
          .enabled(if: ReportDecoder.libgpsAPIVersion >= 12, "gpsd 3.22's lexer drops $HE sentences"))
    func gyrocompassSentences() async throws {
        let headings = try await headings("HEHDT,%.1f,T", [100, 110, 120])
        #expect(Array(Set(headings.map(\.trueHeading))).sorted() == [100, 110, 120])
    }

    @Test("$HCHDM (a magnetic compass) becomes a true heading by gpsd's variation from 3.25 on",
          .enabled(if: ReportDecoder.libgpsReadsMagneticHeading, "gpsd before 3.25 has no HDM"))
    func magneticCompassSentences() async throws {
        let headings = try await headings("HCHDM,%.1f,M", [200, 210, 220])
        #expect(Array(Set(headings.compactMap(\.magneticHeading))).sorted() == [200, 210, 220])
        for heading in headings {
            #expect(abs(heading.trueHeading - (heading.magneticHeading ?? .nan) - Self.variation) < 1e-9, "\(heading)")
        }
    }

    @Test("a heading from $GPHDT, which has no time, is as old as its arrival: younger than its epoch's fix")
    func headingAges() async throws {
        try await withScratchDirectory { directory in
            let cycles = (0..<40).map { NMEA.Track.epoch($0) + NMEA.sentence(String(format: "GPHDT,%.1f,T", Double($0))) }
            let log = try writeLog(cycles, named: "heading-ages.nmea", in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 30, waitForClient: true) { fake in
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                var beside = 0
                for try await heading in gps.headingUpdates(filter: nil, bufferingPolicy: .unbounded) {
                    let arrival = try #require(heading.arrival, "a heading from a manager has its arrival")
                    // gpsd reads the sentence as the receiver sends it: measured when it arrived.
                    #expect(arrival.delay == .zero, "\(heading): \(arrival)")
                    let snapshot = gps.manager.snapshot
                    // Beside its epoch's fix in one snapshot: the HDT came after the epoch's RMC and GGA, so the
                    // heading is the younger, by the time between their reports, and its age is its arrival's.
                    if snapshot.heading == heading, let fix = snapshot.location, fix.timestamp == heading.timestamp,
                       let headingAge = snapshot.headingAge, let fixAge = snapshot.locationAge {
                        #expect(headingAge == arrival.instant.duration(to: snapshot.instant), "\(snapshot)")
                        #expect(headingAge <= fixAge, "\(snapshot)")
                        beside += 1
                    }
                    if heading.timestamp == NMEA.Track.time(39) { break }
                }
                await gps.stop()
                #expect(beside >= 3, "beside their fix \(beside)")
            }
        }
    }
}
