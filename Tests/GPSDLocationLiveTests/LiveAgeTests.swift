import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// A fix's age from a real gpsd: how long ago the receiver measured it, whatever held it on the way and whatever
/// the system clock says of the receiver's time.
@Suite("A fix's age from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(2)))
struct LiveAgeTests {
    /// A fix as the test read it from its stream.
    struct Received {
        /// The receiver's time of the fix, in seconds from the log's first epoch.
        var second: Double
        /// When it reached the manager.
        var arrival: ContinuousClock.Instant
        /// Its ``Location/age`` when the test read it, and that moment.
        var age: Duration?
        var read: ContinuousClock.Instant
    }

    /// A receiver that sends one RMC a second, fed in real time: gpsd reports each epoch as it reads its one
    /// sentence, so each fix leaves gpsd as soon as the feeder wrote it (unless gpsd is stopped).
    static func oneHertzLog(seconds: Int, in directory: URL) throws -> URL {
        let cycles = (0..<seconds).map {
            NMEA.rmc(time: NMEA.Track.time($0), latitude: 52.5, longitude: NMEA.Track.longitude($0))
        }
        return try writeLog(cycles, named: "rmc-1hz.nmea", in: directory)
    }

    @Test("gpsd stopped 6 s under a stream: each fix's age is its own lag (within 0.5 s), the backlog's large, the others' small")
    func backlogAfterAStall() async throws {
        try await withScratchDirectory { directory in
            let log = try Self.oneHertzLog(seconds: 180, in: directory)
            try await GPSFake.run(logs: [log], cycle: 1, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                defer { try? fake.resume(.gpsd) }
                let (stall, received) = try await Self.stallGPSD(fake, under: gps.updates(bufferingPolicy: .unbounded))
                await gps.stop()
                try Self.expectAges(received, stall: stall, fake: fake)
            }
        }
    }

    /// A receiver whose clock runs 20 % slow or fast against real time, as a simulator's or a replay's may:
    /// gpsfake writes its one sentence an epoch every `pace` seconds, so a receiver second takes `pace` real ones.
    /// gpsd is stopped 8 s under the stream after 15 fixes. The true age of each fix is judged, as above, by the
    /// line through the arrivals before the stall: whatever the pace, each fix's age stays within 0.5 s of it,
    /// and the others' ages are small next to the backlog's.
    @Test("a receiver clock 20 % slow or fast (a sentence every 1.25 s or 0.8 s), gpsd stopped 8 s: each age within 0.5 s of its true lag",
          arguments: [1.25, 0.8])
    func clockOfAnotherRate(pace: Double) async throws {
        try await withScratchDirectory { directory in
            let log = try Self.oneHertzLog(seconds: 120, in: directory)
            try await GPSFake.run(logs: [log], cycle: pace, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                defer { try? fake.resume(.gpsd) }
                let (stall, received) = try await Self.stallGPSD(
                    fake, under: gps.updates(bufferingPolicy: .unbounded), after: 15, for: .seconds(8))
                await gps.stop()
                try Self.expectAges(received, stall: stall, fake: fake, pace: pace)
            }
        }
    }

    @Test("a log dated a year ahead, its feeder stopped: requestLocation(maximumAge:) refuses gpsd's fix and times out; with the feeder running, a live fix")
    func heldFixOfUnknownAge() async throws {
        try await withScratchDirectory { directory in
            let log = try writeLog(NMEA.Track.epochs(1200, from: NMEA.Track.aYear(after: Date())), named: "year-ahead.nmea",
                                   in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                defer { try? fake.resume(.feeder) }
                let server = try GPSDServer(parsing: fake.server)
                // A first client starts the log; once it has a fix, gpsd holds one. Then the receiver falls silent.
                let primer = AsyncLocationManager(server: server)
                var primed: Location?
                for try await fix in primer.updates() {
                    primed = fix
                    break
                }
                await primer.stop()
                let first = try #require(primed, "a first fix")
                try fake.suspend(.feeder)
                let polls = fake.pollRepliesWithFix

                let gps = AsyncLocationManager(server: server)
                let error = await #expect(throws: LocationError.self) {
                    try await gps.requestLocation(timeout: .seconds(4), maximumAge: .seconds(5))
                }
                #expect(error?.code == .timedOut, "\(error as Any)")
                // gpsd offered the fix it held, a year ahead of its own clock: refused, not missing.
                #expect(fake.pollRepliesWithFix > polls, "gpsd answered the poll with its fix:\n\(fake.standardError.suffix(3000))")

                let resumed = ContinuousClock.now
                try fake.resume(.feeder)
                let fix = try await gps.requestLocation(timeout: .seconds(20), maximumAge: .seconds(5))
                // The rest of the epoch the feeder stopped in may come first: as late as the primer's fix, not earlier.
                #expect(fix.timestamp >= first.timestamp, "an epoch of the log from the feeder's stop on: \(fix)")
                #expect(fix.arrival.map { $0.instant > resumed } == true, "a report of the receiver that went on: \(fix)")
                let age = try #require(fix.age, "a live fix's age is known")
                #expect(age < .seconds(5), "and within the maximum age: \(age)")
            }
        }
    }

    /// Reads the stream; after its `count`th fix, stops gpsd for `length` (the feeder goes on writing) and lets it
    /// go on, and reads on until 5 s after that. Returns when gpsd was stopped and resumed, and every fix read.
    static func stallGPSD(
        _ fake: GPSFake, under updates: LocationUpdates, after count: Int = 10, for length: Duration = .seconds(6)
    ) async throws -> (stall: (stopped: ContinuousClock.Instant, resumed: ContinuousClock.Instant), received: [Received]) {
        let (stallPoint, stallPointSink) = AsyncStream.makeStream(of: Void.self)
        let resumedAt = Locked<Result<ContinuousClock.Instant, any Error>?>(nil)
        let stall = Task {
            do {
                for await _ in stallPoint { break }
                try fake.suspend(.gpsd)
                let stopped = ContinuousClock.now
                try await Task.sleep(for: length)
                let resumed = ContinuousClock.now   // before the signal: nothing gpsd sends after it arrives earlier
                try fake.resume(.gpsd)
                resumedAt.withLock { $0 = .success(resumed) }
                return (stopped: stopped, resumed: resumed)
            } catch {
                resumedAt.withLock { $0 = .failure(error) }
                throw error
            }
        }
        defer { stall.cancel() }
        var received: [Received] = []
        reading: for try await fix in updates {
            let age = fix.age
            let read = ContinuousClock.now
            let arrival = try #require(fix.arrival, "a live fix has its arrival")
            received.append(Received(second: fix.timestamp.timeIntervalSince(NMEA.Track.start), arrival: arrival.instant,
                                     age: age, read: read))
            if received.count == count { stallPointSink.yield() }
            switch resumedAt.withLock({ $0 }) {
            case .success(let resumed)? where arrival.instant > resumed + .seconds(5): break reading
            case .failure?: break reading
            default: continue
            }
        }
        return (try await stall.value, received)
    }

    /// The true age of each fix comes from the receiver's time and the arrivals before the stall: a line through
    /// them (least squares, leaving out the first two fixes, which gpsd's detection of the receiver may delay) says
    /// when each receiver time arrives without a stall. A fix that arrived after the resume, whose receiver time was
    /// due before it, is a backlog fix, held by the stopped gpsd. With `pace`, the line's slope (real seconds a
    /// receiver second) must be it, within 0.1 s: gpsfake sleeps `pace` between sentences and takes a few
    /// milliseconds to write one, more on a busy machine.
    static func expectAges(
        _ received: [Received], stall: (stopped: ContinuousClock.Instant, resumed: ContinuousClock.Instant), fake: GPSFake,
        pace: Double? = nil
    ) throws {
        let reference = stall.stopped
        func seconds(_ instant: ContinuousClock.Instant) -> Double { reference.duration(to: instant).timeInterval }
        let before = received.filter { $0.arrival < stall.resumed }
        try #require(before.count >= 10, "10 fixes before the stall: \(received)\n\(fake.standardError.suffix(1500))")
        let line = Self.leastSquares(before.dropFirst(2).map { ($0.second, seconds($0.arrival)) })
        if let pace {
            try #require(abs(line.slope - pace) < 0.1, "a receiver second took \(line.slope) s, not \(pace) s")
        }
        /// When the fix of receiver time `second` would have arrived without the stall, in seconds from the stop.
        func due(_ fix: Received) -> Double { line.intercept + line.slope * fix.second }
        /// How long before the test read the fix the receiver measured it.
        func trueAge(_ fix: Received) -> Double { seconds(fix.read) - due(fix) }
        func ages(_ fixes: [Received]) -> String {
            fixes.map { "\($0.second): age \($0.age.map { String(format: "%.3f", $0.timeInterval) } ?? "nil"), "
                + "true \(String(format: "%.3f", trueAge($0)))" }.joined(separator: "; ")
        }
        let resumed = seconds(stall.resumed)
        let backlog = received.filter { $0.arrival >= stall.resumed && due($0) < resumed }
        let after = received.filter { due($0) >= resumed + 1 }   // measured a second or more after gpsd went on

        // The stall held several fixes, which came in one burst: bunched closer than the receiver measured them.
        try #require(backlog.count >= 4, "a backlog of several fixes: \(ages(received))")
        let arrivalSpan = seconds(backlog.last!.arrival) - seconds(backlog.first!.arrival)
        let receiverSpan = backlog.last!.second - backlog.first!.second
        #expect(arrivalSpan < receiverSpan / 2,
                "a burst: \(backlog.count) fixes of \(receiverSpan) s of receiver time arrived within \(arrivalSpan) s")
        #expect(trueAge(backlog[0]) > 3, "the oldest backlog fix waited in gpsd: \(ages(backlog))")

        #expect(after.count >= 3, "fixes after the stall: \(ages(received))")
        // Each fix's age is its own lag, held or not. (The first two fixes, which the line leaves out, are not
        // judged: their lag is gpsd's detection of the receiver.) How fresh the others are depends on how fast
        // a busy machine lets gpsfake feed and the test read: they are judged against the stall, not the clock.
        let judged = before.dropFirst(2) + backlog + after
        for fix in judged {
            let age = try #require(fix.age, "a live fix's age is known")
            #expect(abs(age.timeInterval - trueAge(fix)) < 0.5, "its own lag: \(ages(Array(judged)))")
        }
        let held = trueAge(backlog[0])
        for fix in before.dropFirst(2) + after {
            #expect(fix.age.map { $0.timeInterval < held / 2 } == true,
                    "fresh next to the oldest backlog fix's \(held) s: \(ages(Array(before + after)))")
        }
    }

    /// The least-squares line through `points` (x, y): y ≈ intercept + slope · x.
    static func leastSquares(_ points: [(x: Double, y: Double)]) -> (intercept: Double, slope: Double) {
        let count = Double(points.count)
        let meanX = points.map(\.x).reduce(0, +) / count
        let meanY = points.map(\.y).reduce(0, +) / count
        let covariance = points.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +)
        let variance = points.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        let slope = covariance / variance
        return (meanY - slope * meanX, slope)
    }
}
