import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The README's library example, as written, against a real gpsd playing a receiver that sends GGA before RMC
/// (gpsd's first report of such a session has a position and no time).
@Suite("The README's example", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveReadmeTests {
    /// Runs `example` (which prints through the `print` it is given) against a fresh gpsd playing a GGA-first
    /// log, until it has printed `count` lines, then cancels it: the loop ends without an error then.
    static func run(
        printing count: Int, _ example: @escaping @Sendable (GPSDServer, _ print: @escaping @Sendable (Any...) -> Void) async throws -> Void
    ) async throws -> [String] {
        let cycles = (0..<600).map { NMEA.Track.epoch($0, ggaFirst: true) }
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        return try await withScratchDirectory { directory in
            let log = try writeLog(cycles, named: "gga-first.nmea", in: directory)
            return try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                let server = try GPSDServer(parsing: fake.server)
                let running = Task { try await example(server) { items in line.yield(items.map { "\($0)" }.joined(separator: " ")) } }
                var printed: [String] = []
                for await text in lines {
                    printed.append(text)
                    if printed.count == count { break }
                }
                running.cancel()
                try await running.value
                return printed
            }
        }
    }

    /// `Date`'s description and the speed, as the loop prints them: "2025-06-01 12:00:03 +0000 2.984".
    static func expectTimeAndSpeed(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let parts = text.split(separator: " ")
        #expect(parts.count == 4 && parts[0].hasPrefix("2025-06-01") && Double(parts[3]) != nil, "\(text)",
                sourceLocation: sourceLocation)
    }

    @Test("the whole example runs as written on a GGA-before-RMC log: one fix, then fixes with their times")
    func exampleAsWritten() async throws {
        let printed = try await Self.run(printing: 11) { server, print in
            // From README.md, "The library", with the server gpsfake runs instead of localhost:2947.
            let gps = AsyncLocationManager(server: server)
            let here = try await gps.requestLocation(timeout: .seconds(10), maximumAge: .seconds(2))
            print(here.coordinate.latitude, here.coordinate.longitude, here.horizontalAccuracy ?? .nan)

            for try await fix in gps.updates(desiredAccuracy: 20, distanceFilter: 5) {
                print(fix.timestamp, fix.speed ?? 0)
            }
        }
        let first = printed[0].split(separator: " ").compactMap { Double($0) }
        #expect(first.count == 3 && abs(first[0] - 52.5) < 1e-6, "the one fix: \(printed[0])")
        printed.dropFirst().forEach { Self.expectTimeAndSpeed($0) }
    }

    @Test("its streaming loop, as written, from gpsd's first report of the session (position, no time)")
    func loopFromFirstReport() async throws {
        let printed = try await Self.run(printing: 10) { server, print in
            let gps = AsyncLocationManager(server: server)
            for try await fix in gps.updates(desiredAccuracy: 20, distanceFilter: 5) {
                print(fix.timestamp, fix.speed ?? 0)
            }
        }
        printed.forEach { Self.expectTimeAndSpeed($0) }
    }
}
