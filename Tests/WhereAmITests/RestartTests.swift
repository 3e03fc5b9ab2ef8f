import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `whereami --follow` started before gpsd, through gpsd being killed and started again on its port.
    @Suite("whereami through gpsd restarts", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
    struct RestartTests {
        /// Epochs `range` of the tests' track (``NMEA/Track``), as a log in `directory`.
        static func log(_ range: Range<Int>, in directory: URL) throws -> URL {
            try writeLog(range.map { NMEA.Track.epoch($0) }, named: "epochs-\(range.lowerBound).nmea", in: directory)
        }

        static func time(_ second: Int) -> String { GPSDTime.string(from: NMEA.Track.time(second))! }

        @Test("--follow keeps streaming through a restart: fixes from both gpsds in order, a status line per change; -q: none",
              arguments: [[], ["-q"]])
        func followThroughRestart(options: [String]) async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            let process = try await startWhereAmI(["--follow", "--format", "json"] + options + ["127.0.0.1:\(port)"])

            // Started before any gpsd: it keeps trying until one comes. Without -q it says so; the first gpsd starts
            // only once it has, lest a slow start (a busy machine) find gpsd there at the first attempt.
            if !options.contains("-q") {
                let refused = await process.waitForOutput(onStandardError: true, timeout: .seconds(30)) {
                    $0.lowercased().contains("connection refused")
                }
                try #require(refused, "a retry before any gpsd: \(process.stderrSoFar)")
            }
            try await withScratchDirectory("restart") { directory in
                for (range, awaited) in [(0..<20, 5), (100..<120, 105)] {
                    let log = try Self.log(range, in: directory)
                    try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true,
                                          port: port) { fake in
                        let printed = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(Self.time(awaited)) }
                        _ = await requireLive(printed, "the fix of \(Self.time(awaited))", fake: fake)
                    }   // killed here, halfway through its log
                }
            }
            process.terminate()
            let result = await process.finish(deadline: .seconds(30))
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")

            let times = try result.stdout.split(separator: "\n").map { try Formats.jsonRecord(String($0)).timestamp ?? "" }
            #expect(times.contains(Self.time(5)) && times.contains(Self.time(105)), "fixes from both: \(times)")
            // In order; an epoch comes again only right after a connection, when gpsd's first cycle of a log brings a
            // report per sentence and a later one adds a value (the library's rule), never after later epochs.
            #expect(times == times.sorted(), "in order: \(times)")
            let repeated = zip(times, times.dropFirst()).filter { $0 == $1 }.map(\.0)
            #expect(Set(repeated).isSubset(of: [Self.time(0), Self.time(100)]), "no epoch twice but a first: \(times)")
            if options.contains("-q") {
                #expect(result.stderr.isEmpty, "--quiet: no status lines: \(result.stderr)")
                return
            }
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { $0.hasPrefix("whereami: ") }, "one line each: \(lines)")
            let statuses = lines.map { $0.dropFirst("whereami: ".count) }
            // What a restart looks like: a fix, the connection gone, a retry, a new connection, a fix again.
            let kinds = statuses.compactMap { line -> String? in
                for kind in ["reconnecting in", "connected", "fix 3D"] where line.hasPrefix(kind) { return kind }
                return nil
            }
            var collapsed: [String] = []
            for kind in kinds where collapsed.last != kind { collapsed.append(kind) }
            #expect(collapsed.drop { $0 != "connected" }.prefix(5)
                        == ["connected", "fix 3D", "reconnecting in", "connected", "fix 3D"], "\(statuses)")
            #expect(statuses.contains { $0.hasPrefix("reconnecting in") && $0.lowercased().contains("connection refused") },
                    "before the first gpsd, each retry says why: \(statuses)")
        }
    }
}
