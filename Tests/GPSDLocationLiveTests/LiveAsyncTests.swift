import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// `AsyncLocationManager` against a real gpsd, fed NMEA by gpsfake.
@Suite("AsyncLocationManager against a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveAsyncTests {
    @Test("requestLocation(maximumAge:) takes the fix gpsd holds instead of waiting for the next epoch")
    func maximumAgeUsesPoll() async throws {
        // Five epochs played once, then a minute of text sentences that report nothing: gpsd holds the last fix
        // and says nothing more. (At a log's end gpsfake takes the device away, and gpsd's fix with it.)
        // No next epoch ever comes, so only the fix gpsd holds can answer the fresh request. The epochs are dated
        // 10 to 6 s before now: the fresh manager has no live fix of the receiver to age the held one by, and
        // gpsd's clock vouches for it only when the fix's time is at most a day behind it (and not ahead).
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 10).rounded(.down))
        let times = (0..<5).map { start.addingTimeInterval(Double($0)) }
        let cycles = NMEA.Track.epochs(5, from: start) + Array(repeating: NMEA.sentence("GPTXT,01,01,02,hold"), count: 1200)   // 60 s at 0.05 s a sentence
        try await withScratchDirectory { directory in
            let log = try writeLog(cycles, named: "five.nmea", in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.05, once: true, waitForClient: true) { fake in
                let server = try GPSDServer(parsing: fake.server)

                // Another client follows the log to its last epoch, so gpsd holds that one.
                let primer = AsyncLocationManager(server: server)
                var held: Location?
                for try await fix in primer.updates(bufferingPolicy: .unbounded) where fix.timestamp == times.last {
                    held = fix
                    break
                }
                let last = try #require(held)

                // A fresh manager, with nothing cached, asks gpsd.
                let fresh = AsyncLocationManager(server: server)
                #expect(fresh.manager.location == nil)
                let fix = try await fresh.requestLocation(timeout: .seconds(30), maximumAge: .seconds(60))
                #expect(fix.timestamp == last.timestamp, "the epoch gpsd held")
                #expect(fix.coordinate == last.coordinate)
                // gpsd (run with -D 2 while gpsfake waits for a client) logs what clients send: the fresh one polled.
                #expect(fake.standardError.contains("?POLL;"), "the request asked gpsd for its fix")
            }
        }
    }

    @Test("requestLocation(timeout:) without a fix throws timed out, not before its timeout")
    func timeoutWithoutFix() async throws {
        try await GPSFake.run(logs: [Fixtures.url("nofix.nmea")], cycle: 0.05, once: false, waitForClient: true) { fake in
            let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: LocationError.self) {
                try await gps.requestLocation(timeout: .seconds(1))
            }
            let elapsed = start.duration(to: clock.now)
            #expect(error?.code == .timedOut)
            #expect(error?.bestLocation == nil)
            // Not before the timeout; the upper bound is only there to catch a hang, not to time the run.
            #expect(elapsed >= .seconds(1) && elapsed < .seconds(30), "took \(elapsed)")
        }
    }

    @Test("updates() delivers the moving track in order, then stops the watch when the consumer leaves")
    func updatesDeliverTrack() async throws {
        let expected = try ExpectedFix.load("moving.expected.json")
        // gpsd stays up after the log, so the last epoch arrives however late; the body ends at it.
        try await GPSFake.run(logs: [Fixtures.url("moving.nmea")], cycle: 0.01, once: true,
                                     lingerAfterEnd: 60, waitForClient: true) { fake in
            let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
            var received: [Location] = []
            // Unbounded: the test wants every fix even if it falls behind (the default keeps the newest 16).
            for try await fix in gps.updates(bufferingPolicy: .unbounded) {
                received.append(fix)
                if case let time = fix.timestamp, abs(time.timeIntervalSince(expected.last!.date)) < 0.0005 { break }
            }
            expectTrack(received, equals: expected, refinements: true)   // gpsd 3.25+: an epoch per sentence
        }
    }

    @Test("gpsd absent: requestLocation throws gpsd unavailable at once")
    func gpsdAbsent() async throws {
        let gps = AsyncLocationManager(server: GPSDServer(host: "127.0.0.1", port: closedPort()))
        let error = await #expect(throws: LocationError.self) {
            try await gps.requestLocation(timeout: .seconds(30))   // far beyond the failure: never timedOut
        }
        #expect(error?.code == .gpsdUnavailable)
    }

    /// A polling loop, as CoreLocation-style programs write one: each request waits for the receiver's next fix in
    /// the session the one before left lingering, instead of connecting anew.
    @Test("30 sequential requestLocation() calls at 10 Hz hold one session: one connection, no status restarts")
    func aLoopOfRequestsHoldsOneSession() async throws {
        // 3 sentences an epoch; with gpsfake's own ~10 ms a sentence, about 10 epochs a second.
        let cycles = NMEA.Track.epochs(600, from: NMEA.Track.start)
        try await withScratchDirectory { directory in
            let log = try writeLog(cycles, named: "loop.nmea", in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.023, once: true, waitForClient: true) { fake in
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                #expect(gps.manager.sessionLinger == LocationManager.defaultSessionLinger)
                let statuses = Locked<[String]>([])
                gps.manager.addObserver { if case .status(let status) = $0 { statuses.withLock { $0.append(status.name) } } }
                var fixes: [Location] = []
                for _ in 1...30 { fixes.append(try await gps.requestLocation(timeout: .seconds(30))) }
                #expect(zip(fixes, fixes.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp }, "in order")
                #expect(Set(fixes.map(\.timestamp)).count >= 15, "each request waited for a new report")
                #expect(gps.manager.snapshot.connections == 1, "one session for the whole loop")
                #expect(gps.health.reconnects == 0)
                let told = statuses.withLock { $0 }
                #expect(told.filter { $0 == "connecting" }.count == 1 && !told.contains("stopped"), "\(told)")
                await gps.stop()
                #expect(gps.manager.status == .stopped, "stop() closed the lingering session")
            }
        }
    }
}
