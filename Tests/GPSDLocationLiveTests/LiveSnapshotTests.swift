import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// ``LocationManager/snapshot`` polled at 100 Hz, as a control loop polls it, while a real gpsd sends fixes and
/// headings, stalls and is restarted. Scripts/test runs this suite under ThreadSanitizer too.
@Suite("The snapshot from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(2)))
struct LiveSnapshotTests {
    /// What the poller saw, and what it found wrong.
    struct Seen {
        var reads = 0
        var problems: [String] = []
        /// The newest snapshot, and how many sessions had connected when its fix was first seen.
        var last: LocationSnapshot?
        var lastFixSession = 0
        /// Whether a snapshot said the fix and the heading were stale, and the largest fix age seen meanwhile.
        var staleBoth = false
        var oldestWhileStale: Duration = .zero
    }

    @Test("a 100 Hz loop reads consistent snapshots through fixes, a stall and a restart")
    func pollingThroughAStallAndARestart() async throws {
        try await withScratchDirectory("snapshot") { directory in
            // Epochs of RMC, GGA, GSA and a dual-antenna heading ($GPHDT), turning a degree an epoch.
            let cycles = (0..<600).map { NMEA.Track.epoch($0) + NMEA.sentence(String(format: "GPHDT,%.1f,T", Double($0 % 360))) }
            let log = try writeLog(cycles, named: "heading.nmea", in: directory)
            let port = freeLoopbackPort()
            let manager = LocationManager(server: GPSDServer(host: "127.0.0.1", port: port))
            manager.staleTimeout = .seconds(1)
            manager.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(200), jitter: 0)
            let gps = AsyncLocationManager(manager: manager)
            let seen = Locked(Seen())
            let watching = Task { for try await _ in gps.liveUpdates() {} }   // keeps the watch on
            let polling = Task { await Self.poll(manager, into: seen) }
            defer {
                watching.cancel()
                polling.cancel()
            }
            func waitFor(_ what: String, _ condition: (LocationSnapshot) -> Bool) async throws {
                while !(seen.withLock { $0.last.map(condition) } ?? false) {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            /// A current fix and a current heading, each of the session's receiver, both ages known.
            func current(_ snapshot: LocationSnapshot) -> Bool {
                !snapshot.isStale && !snapshot.isHeadingStale && snapshot.locationAge != nil && snapshot.headingAge != nil
            }

            try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true, port: port) { fake in
                defer { try? fake.resume(.gpsd) }
                try await waitFor("a current fix and heading") { current($0) && $0.connections == 1 }
                // gpsd stopped for twice the stale timeout: both go stale, and the fix's age grows meanwhile.
                try fake.suspend(.gpsd)
                try await waitFor("both stale") { $0.isStale && $0.isHeadingStale }
                try await Task.sleep(for: .seconds(1))
                try fake.resume(.gpsd)
                try await waitFor("current again", current)
            }
            // The first gpsd is gone; a second starts on its port, from the log's start.
            try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true, port: port) { _ in
                try await waitFor("the second session's fix and heading") { current($0) && $0.connections == 2 }
            }
            polling.cancel()
            await gps.stop()
            let result = seen.withLock { $0 }
            #expect(result.problems.isEmpty, "\(result.problems.prefix(10))")
            #expect(result.staleBoth)
            #expect(result.oldestWhileStale >= .seconds(1), "the fix's age grew while gpsd was stopped: \(result.oldestWhileStale)")
            #expect(result.reads > 100, "polled: \(result.reads) reads")
        }
    }

    /// Reads `manager`'s snapshot every 10 ms until cancelled, checking each against itself and the one before.
    static func poll(_ manager: LocationManager, into seen: Locked<Seen>) async {
        while !Task.isCancelled {
            let snapshot = manager.snapshot
            seen.withLock { seen in
                seen.reads += 1
                seen.problems += problems(of: snapshot, after: seen.last, whoseFixCameIn: seen.lastFixSession)
                if snapshot.location?.arrival != seen.last?.location?.arrival { seen.lastFixSession = snapshot.connections }
                if snapshot.isStale && snapshot.isHeadingStale {
                    seen.staleBoth = true
                    seen.oldestWhileStale = max(seen.oldestWhileStale, snapshot.locationAge ?? .zero)
                }
                seen.last = snapshot
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What cannot be true of one snapshot, or of it after the one before, whose fix was first seen when `session`
    /// sessions had connected.
    static func problems(of snapshot: LocationSnapshot, after previous: LocationSnapshot?, whoseFixCameIn session: Int) -> [String] {
        var problems: [String] = []
        func problem(_ text: String) { problems.append("\(text): \(snapshot)") }
        let isFix = if case .fix = snapshot.status { true } else { false }
        if snapshot.isStale != (snapshot.location != nil && !isFix) { problem("stale disagrees with the status") }
        if let age = snapshot.locationAge, age < .zero { problem("a negative fix age") }
        if let age = snapshot.headingAge, age < .zero { problem("a negative heading age") }
        if snapshot.location == nil && snapshot.locationAge != nil { problem("an age without a fix") }
        if snapshot.heading == nil && snapshot.headingAge != nil { problem("an age without a heading") }
        if let location = snapshot.location, location.arrival.map({ $0.instant > snapshot.instant }) == true {
            problem("a fix that arrived after the snapshot was read")
        }
        guard let previous else { return problems }
        if snapshot.instant < previous.instant { problem("read before the snapshot before it") }
        if snapshot.connections < previous.connections { problem("fewer connections than before") }
        // A new session's receiver may start over (a replay from its start); within one, time goes forward.
        if snapshot.connections == session, let now = snapshot.location, let before = previous.location,
           now.timestamp < before.timestamp {
            problem("an older fix than the one before, in the same session")
        }
        return problems
    }
}
