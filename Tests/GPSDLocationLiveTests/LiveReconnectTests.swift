import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The library against a real gpsd that goes away and comes back on the same port.
@Suite("Reconnecting to a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(3)))
struct LiveReconnectTests {
    static let epochsPerSegment = 20
    /// Segment `segment` of one continuous track moving east: its epochs, one log.
    static func segment(_ segment: Int, in directory: URL) throws -> URL {
        let first = segment * epochsPerSegment
        let cycles = (first..<(first + epochsPerSegment)).map { NMEA.Track.epoch($0) }
        return try writeLog(cycles, named: "segment\(segment).nmea", in: directory)
    }

    @Test("gpsd killed mid-stream and started again on its port, 10 times: the stream goes on, in order, losing nothing sent after a restart, no duplicate")
    func tenRestarts() async throws {
        let port = freeLoopbackPort()
        let manager = LocationManager(server: GPSDServer(host: "127.0.0.1", port: port))
        let policy = manager.reconnectPolicy
        let gps = AsyncLocationManager(manager: manager)
        let statuses = Locked<[LocationStatus]>([])
        let watching = Task { for await status in gps.statusUpdates() { statuses.withLock { $0.append(status) } } }
        var fixes = gps.updates(bufferingPolicy: .unbounded).makeAsyncIterator()
        var received: [Location] = []
        var firstAfterRestart: [Date?] = []

        try await withScratchDirectory("restarts") { directory in
            for segment in 0...10 {
                let log = try Self.segment(segment, in: directory)
                let segmentStart = NMEA.Track.time(segment * Self.epochsPerSegment)
                // The last gpsd plays its segment to the end; the others are killed halfway through it.
                let wanted = segment == 10 ? Self.epochsPerSegment : Self.epochsPerSegment / 2
                try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 60, waitForClient: true,
                                      port: port) { _ in
                    var fromThisGPSD = 0
                    while fromThisGPSD < wanted {
                        guard let fix = try await fixes.next() else { return }
                        received.append(fix)
                        // The stream's buffer outlives the gpsd that was killed: a fix that gpsd sent before its end
                        // can come after the restart. It is of the segment before (whose epochs all come earlier),
                        // not one this gpsd sent.
                        guard fix.timestamp >= segmentStart else { continue }
                        if fromThisGPSD == 0 { firstAfterRestart.append(fix.timestamp) }
                        fromThisGPSD += 1
                    }
                }   // here gpsfake and its gpsd are killed
            }
        }
        await gps.stop()
        watching.cancel()

        // In order, and no duplicate: a later fix is of a later epoch, or of the same epoch with a value the earlier
        // lacked (gpsd's first cycle of a log brings a TPV per sentence).
        let times = received.map(\.timestamp)
        #expect(times.count == received.count)
        for (earlier, later) in zip(received, received.dropFirst()) {
            #expect(earlier.timestamp < later.timestamp || earlier.timestamp == later.timestamp && later.addsValue(to: earlier),
                    "\(earlier) then \(later)")
        }
        #expect(firstAfterRestart == (0...10).map { NMEA.Track.time($0 * Self.epochsPerSegment) },
                "each gpsd's first epoch arrived: nothing it sent after the restart was lost")
        let seen = statuses.withLock { $0 }
        let delays = seen.compactMap { status -> Duration? in
            if case .reconnecting(_, let delay, _) = status { delay } else { nil }
        }
        #expect(delays.count >= 10, "a reconnection after each kill: \(seen.map(\.description))")
        let cap = policy.maximumDelay * (1 + policy.jitter)
        #expect(delays.allSatisfy { $0 <= cap }, "every wait within the backoff cap: \(delays)")
        print("restarts: \(received.count) fixes over 11 gpsds; waits before reconnecting: \(delays.map(\.description))")
    }
}
