import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The backlog a real gpsd sends in one burst after a stall, through the streams' default buffering: a reader that
/// keeps up gets every epoch of it, one that sleeps holds the newest 16 or the last 2 seconds, not the burst.
@Suite("A real gpsd's backlog and the streams' buffers", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite,
       .timeLimit(.minutes(2)))
struct LiveBacklogTests {
    /// A 10 Hz receiver that sends one RMC an epoch (gpsd reports each as it reads it), at 52.5° N moving east.
    static func tenHertzLog(seconds: Int, in directory: URL) throws -> URL {
        let cycles = (0..<seconds * 10).map { tenth in
            NMEA.rmc(time: NMEA.Track.start.addingTimeInterval(Double(tenth) / 10), latitude: 52.5,
                     longitude: 13.4 + Double(tenth) * 0.00001)
        }
        return try writeLog(cycles, named: "rmc-10hz.nmea", in: directory)
    }

    /// A fix as a reader took it: its receiver time, in tenths of a second from the log's first epoch, and when it
    /// reached the manager.
    struct Taken: Equatable {
        var tenth: Int
        var arrival: ContinuousClock.Instant
    }

    @Test("gpsd stopped 8 s at 10 Hz: a oncePerEpoch reader that keeps up gets every epoch gpsd sent; one that sleeps holds the newest 16 or the last 2 s")
    func backlogAfterAStall() async throws {
        try await withScratchDirectory { directory in
            let log = try Self.tenHertzLog(seconds: 90, in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.1, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                defer { try? fake.resume(.gpsd) }
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                // What the manager decided, on its reader thread: every epoch gpsd sent, with no buffer between.
                let decided = Locked<[Int]>([])
                let realTime = gps.manager.realTimeUpdates(delivery: .oncePerEpoch) { fix in
                    decided.withLock { $0.append(Self.tenth(of: fix)) }
                }
                defer { realTime.cancel() }
                let epochs = gps.updates(delivery: .oncePerEpoch)
                // A reader that takes one epoch, then sleeps through the rest of the run.
                let sleeping = gps.updates(delivery: .oncePerEpoch)
                let sleeper = Task {
                    for try await _ in sleeping { try await Task.sleep(for: .seconds(600)) }
                }
                defer { sleeper.cancel() }
                let rssBefore = Self.residentKilobytes()

                var taken: [Taken] = []
                var stall: (stopped: ContinuousClock.Instant, resumed: ContinuousClock.Instant)?
                for try await fix in epochs {
                    let arrival = try #require(fix.arrival, "a live fix has its arrival").instant
                    taken.append(Taken(tenth: Self.tenth(of: fix), arrival: arrival))
                    if taken.count == 30, stall == nil {
                        try fake.suspend(.gpsd)
                        let stopped = ContinuousClock.now
                        try await Task.sleep(for: .seconds(8))
                        let resumed = ContinuousClock.now   // before the signal: nothing it sends after arrives earlier
                        try fake.resume(.gpsd)
                        stall = (stopped, resumed)
                    }
                    if let stall, arrival > stall.resumed + .seconds(4) { break }
                }
                let (stopped, resumed) = try #require(stall, "gpsd was stopped and went on")
                let rssAfter = Self.residentKilobytes()
                // The streams end (the real-time subscription goes on): nothing more is handed to them or dropped.
                await gps.stop()
                let health = gps.health
                // Held by the sleeper: what it was handed, less what it dropped and the one it took.
                let held = sleeping.yieldedCount - sleeping.droppedCount - 1

                let tenths = taken.map(\.tenth)
                // The backlog came at once, and was far more than 16 epochs.
                let burst = taken.filter { $0.arrival > resumed && $0.arrival < resumed + .milliseconds(500) }.count
                #expect(burst >= 50, "the epochs gpsd held for 8 s came at once: \(burst) within 0.5 s of the resume")
                // Every epoch gpsd sent, in order, none missing: gpsd's own output has one a tenth of a second.
                #expect(zip(tenths, tenths.dropFirst()).allSatisfy { $1 == $0 + 1 },
                        "no epoch missing: gaps after \(zip(tenths, tenths.dropFirst()).filter { $1 != $0 + 1 }.map(\.0))")
                let seen = decided.withLock { $0 }.drop { $0 != tenths.first }
                #expect(tenths == Array(seen.prefix(tenths.count)), "as the real-time handler saw them")
                #expect(epochs.droppedCount == 0)

                // The sleeper, 4 s after the burst came: the newest 16, or the epochs of the last 2 s (20 at 10 Hz), not
                // the burst; everything else it was handed was dropped, and counted.
                #expect(held >= 16 && held <= 16 + 20, "held \(held)")
                #expect(sleeping.droppedCount >= burst, "dropped \(sleeping.droppedCount)")
                #expect(health.streamDrops == sleeping.droppedCount + epochs.droppedCount)
                let bytes = held * MemoryLayout<Location>.stride
                print("""
                    gpsd stopped \(stopped.duration(to: resumed)); \(taken.count) epochs taken by the reader that keeps \
                    up (\(burst) within 0.5 s of the resume), \(epochs.droppedCount) dropped; the sleeping reader holds \(held) \
                    fixes (\(bytes) bytes of Location values, \(MemoryLayout<Location>.stride) each) and dropped \
                    \(sleeping.droppedCount); resident set \(rssBefore) kB before the stall, \(rssAfter) kB after
                    """)
            }
        }
    }

    /// A fix's receiver time in tenths of a second from the log's first epoch.
    static func tenth(of fix: Location) -> Int {
        Int((fix.timestamp.timeIntervalSince(NMEA.Track.start) * 10).rounded())
    }

    /// The process's resident set (`VmRSS`), in kB; 0 if it cannot be read.
    static func residentKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }
}
